"""SemanticMatch: the layered word/sentence/paragraph semantic score (no Opik import)."""
