"""COMET (Rei et al., 2020) inference without unbabel-comet: checkpoints, layers, engine."""
