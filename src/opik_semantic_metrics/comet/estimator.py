"""COMET's feature vectors and feed-forward heads.

Regression models (``regression_metric``) score the pooled sentence embeddings of the
translation (mt), reference (ref) and source (src) through one feature vector
(Rei et al., 2020, "COMET: A Neural Framework for MT Evaluation")::

    [mt, ref, mt * ref, |mt - ref|, mt * src, |mt - src|]

reference-free ones (``referenceless_regression_metric``) through
``[mt, src, mt * src, |mt - src|]``; unified models feed the first token of the joint
encoding straight into the head.

The head is COMET's ``FeedForward``: ``Linear, activation, Dropout`` per hidden size, then
a last ``Linear`` (and an optional final activation). Activations are named as in the
hyper-parameters and looked up in ``torch.nn`` by ``name.title()``, as COMET does
(``"tanh"`` and ``"Tanh"`` are ``nn.Tanh``). The module layout, dropouts included, is
COMET's, so that checkpoint keys ``estimator.ff.<index>.*`` load as they are.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise

import torch


def regression_features(
    source: torch.Tensor, translation: torch.Tensor, reference: torch.Tensor
) -> torch.Tensor:
    """``(batch, 6 * width)`` features of a reference-based regression model."""
    return torch.cat(
        (
            translation,
            reference,
            translation * reference,
            torch.abs(translation - reference),
            translation * source,
            torch.abs(translation - source),
        ),
        dim=1,
    )


def referenceless_features(source: torch.Tensor, translation: torch.Tensor) -> torch.Tensor:
    """``(batch, 4 * width)`` features of a reference-free regression model."""
    return torch.cat(
        (translation, source, translation * source, torch.abs(translation - source)), dim=1
    )


def activation(name: str) -> torch.nn.Module:
    """The ``torch.nn`` activation COMET builds for ``name``.

    Raises:
        ValueError: ``torch.nn`` has no class named ``name.title()``.

    Example:
        >>> activation("tanh")
        Tanh()
    """
    module = getattr(torch.nn, name.title(), None)
    if module is None:
        raise ValueError(
            f"{name!r} is not an activation COMET can build (torch.nn.{name.title()})."
        )
    return module()


def feed_forward(
    in_features: int,
    hidden_sizes: Sequence[int],
    activations: str,
    final_activation: str | None,
    out_features: int = 1,
) -> torch.nn.Sequential:
    """COMET's estimator head, in eval mode.

    Example:
        >>> feed_forward(12, [8, 4], "Tanh", None)
        Sequential(
          (0): Linear(in_features=12, out_features=8, bias=True)
          (1): Tanh()
          (2): Dropout(p=0.0, inplace=False)
          (3): Linear(in_features=8, out_features=4, bias=True)
          (4): Tanh()
          (5): Dropout(p=0.0, inplace=False)
          (6): Linear(in_features=4, out_features=1, bias=True)
        )
    """
    modules: list[torch.nn.Module] = []
    sizes = [in_features, *hidden_sizes]
    for size_in, size_out in pairwise(sizes):
        # Dropout is inactive in inference; the module keeps COMET's key numbering.
        modules += [
            torch.nn.Linear(size_in, size_out),
            activation(activations),
            torch.nn.Dropout(0.0),
        ]
    modules.append(torch.nn.Linear(sizes[-1], out_features))
    if final_activation is not None:
        modules.append(activation(final_activation))
    return torch.nn.Sequential(*modules).eval()
