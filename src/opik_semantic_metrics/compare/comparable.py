"""Can two sets of scores be compared? One rule for Opik results and result files.

Scores record how they were scored: the weight type (``dtype``), the metric, and the
:data:`COMPARED_SETTINGS`. Two systems scored in different weight types, or by different
metrics, are refused: the difference would be the type's or the metric's, not the
systems'. Other settings that differ only warn, since one model can be named two ways
("all-MiniLM-L6-v2" and its Hub id). Both
:func:`~opik_semantic_metrics.compare.corpus.compare_results` and the ``compare-results`` command
ask :func:`comparison_warnings`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

#: What a bert_score hash says beside the settings that decide a score: the package
#: versions, and which of transformers' two tokenizer classes loaded (one class under
#: transformers 5).
_HASH_BESIDE_SETTINGS = re.compile(r"_version=[^(]*\(hug_trans=[^)]*\)|_fast-tokenizer$")

#: What scores record in their metadata (and result files beside their scores) about how
#: they were scored, beside the weight type: two sets of scores that differ in one were
#: likely scored with different settings, or name one model two ways ("all-MiniLM-L6-v2"
#: and its Hub id), so comparing them warns rather than refuses.
COMPARED_SETTINGS = ("model", "layer", "hash")

_PLURALS = {"model": "models", "layer": "layers", "hash": "hashes"}


def settings_of_hash(text: str) -> str:
    """A bert_score hash without its package versions and tokenizer class: two results
    whose settings hashes differ were scored differently.

    Example:
        >>> settings_of_hash("roberta-large_L17_no-idf_version=0.3.12(hug_trans=5.24.0)-rescaled")
        'roberta-large_L17_no-idf-rescaled'
    """
    return _HASH_BESIDE_SETTINGS.sub("", text)


@dataclass(frozen=True)
class RecordedSettings:
    """What one system's scores record about how they were scored.

    Attributes:
        name: The system's name in messages (a system name or a file path).
        dtypes: The weight types its scores record (none where they record none).
        metrics: The metrics that scored it (none where not recorded).
        settings: Each of :data:`COMPARED_SETTINGS` it records, to the values found
            (a hash already read through :func:`settings_of_hash`).
    """

    name: str
    dtypes: frozenset[str] = frozenset()
    metrics: frozenset[str] = frozenset()
    settings: Mapping[str, frozenset[str]] = field(default_factory=dict)

    @classmethod
    def of(
        cls,
        name: str,
        *,
        dtypes: Iterable[object] = (),
        metrics: Iterable[object] = (),
        settings: Mapping[str, Iterable[object]] | None = None,
    ) -> RecordedSettings:
        """Recorded settings from any values (written as text); hashes are read through
        :func:`settings_of_hash`."""
        found = {
            key: frozenset(
                settings_of_hash(str(value)) if key == "hash" else str(value) for value in values
            )
            for key, values in (settings or {}).items()
            if key in COMPARED_SETTINGS
        }
        return cls(
            name,
            frozenset(str(value) for value in dtypes),
            frozenset(str(value) for value in metrics),
            {key: values for key, values in found.items() if values},
        )


def _by_system(systems: tuple[RecordedSettings, RecordedSettings], key: str) -> str:
    """``"A: float32; B: bfloat16"``: each system's recorded values of ``key``."""

    def values(system: RecordedSettings) -> frozenset[str]:
        if key == "dtype":
            return system.dtypes
        if key == "metric":
            return system.metrics
        return system.settings.get(key, frozenset())

    return "; ".join(
        f"{system.name}: {', '.join(sorted(values(system))) or 'none recorded'}"
        for system in systems
    )


def comparison_warnings(a: RecordedSettings, b: RecordedSettings) -> list[str]:
    """Whether two systems' scores can be compared: refuses, or lists what to warn of.

    The rule: every score of both systems comes from one weight type and one metric
    (where they record them; a system that records none agrees with any); each of the
    :data:`COMPARED_SETTINGS` that holds more than one value is a warning.

    Returns:
        One message per setting that differs (empty when none does).

    Raises:
        ValueError: Different weight types, or different metrics.

    Example:
        >>> comparison_warnings(
        ...     RecordedSettings.of("A", dtypes=["float32"], settings={"layer": [6]}),
        ...     RecordedSettings.of("B", settings={"layer": [3]}),
        ... )
        ["A and B record different layers (A: 6; B: 3): the difference may be the settings', \
not the systems'."]
    """
    systems = (a, b)
    if len(a.dtypes | b.dtypes) > 1:
        raise ValueError(
            f"Expected every score to come from one weight type, found "
            f"{_by_system(systems, 'dtype')}: part of the difference would be the type's. "
            "Score both systems in one weight type (float32 gives the exact scores) to "
            "compare them."
        )
    if len(a.metrics | b.metrics) > 1:
        raise ValueError(
            f"Expected both systems to be scored by one metric, found "
            f"{_by_system(systems, 'metric')}: compare two systems scored by one metric."
        )
    return [
        f"{a.name} and {b.name} record different {_PLURALS[key]} ({_by_system(systems, key)}): "
        "the difference may be the settings', not the systems'."
        for key in COMPARED_SETTINGS
        if len(a.settings.get(key, frozenset()) | b.settings.get(key, frozenset())) > 1
    ]
