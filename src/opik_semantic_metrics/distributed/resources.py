"""How many Ray actors score a dataset, what each reserves, and its CPU threads."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from opik_semantic_metrics.inputs import check_positive_int

#: CPUs per actor when the models run on CPUs and ``num_actors`` is not given: several
#: actors of a few threads each keep more cores busy than one actor whose threads wait
#: for each other at the end of every operation (see ``batching/cpu_parallel.py``).
THREADS_PER_ACTOR = 8


@dataclass(frozen=True)
class Resources:
    """How many actors, and what each asks Ray for.

    Attributes:
        num_actors: Actors in the pool.
        cpus_per_actor: The CPUs each reserves in Ray's accounting (may be a fraction).
        gpus_per_actor: The GPUs each reserves (0: the model runs on the CPU).
        threads_per_actor: The CPU threads PyTorch uses in each actor.
    """

    num_actors: int
    cpus_per_actor: float
    gpus_per_actor: float
    threads_per_actor: int

    @property
    def device(self) -> str:
        """Where an actor's model runs."""
        return "cuda" if self.gpus_per_actor > 0 else "cpu"


def plan_resources(
    cluster: Mapping[str, float],
    num_actors: int | None,
    cpus_per_actor: float | None,
    gpus_per_actor: float | None,
    needs_model: bool = True,
) -> Resources:
    """Actors and their resources, from what the caller gave and the cluster has.

    - GPUs: ``gpus_per_actor=None`` takes one GPU per actor when the cluster has GPUs;
      then one actor per GPU (``num_actors=None``). ``0`` keeps the models on CPUs.
    - CPUs: one actor per :data:`THREADS_PER_ACTOR` CPUs (at least one). Each reserves its
      share of the CPUs less one, at most 1: Ray's read tasks ask for 1 CPU each, and
      actors reserving every CPU would leave them none (on 2 CPUs, two actors of 1 CPU
      and a read task wait for each other for ever). An actor's PyTorch threads are its
      share of the cluster's CPUs, not of its reservation.

    Raises:
        ValueError: A count below 1, negative resources, or GPUs the cluster lacks.
    """
    total_cpus = float(cluster.get("CPU", 0.0))
    total_gpus = float(cluster.get("GPU", 0.0))
    if gpus_per_actor is None:
        gpus_per_actor = 1.0 if total_gpus >= 1 and needs_model else 0.0
    if gpus_per_actor < 0:
        raise ValueError(f"Expected `gpus_per_actor` to be 0 or more, got {gpus_per_actor}.")
    if gpus_per_actor > 0 and total_gpus < gpus_per_actor:
        raise ValueError(
            f"Expected a cluster with GPUs for gpus_per_actor={gpus_per_actor:g}, but it has "
            f"{total_gpus:g} GPUs: pass gpus_per_actor=0 to score on CPUs."
        )
    if num_actors is None:
        if gpus_per_actor > 0:
            num_actors = max(1, int(total_gpus // gpus_per_actor))
        else:
            num_actors = max(1, round(total_cpus / THREADS_PER_ACTOR))
    num_actors = check_positive_int(num_actors, "num_actors")
    if cpus_per_actor is None:
        cpus_per_actor = min(1.0, max(total_cpus - 1.0, total_cpus / 2) / num_actors)
        cpus_per_actor = max(0.01, round(cpus_per_actor, 2))
    if cpus_per_actor < 0:
        raise ValueError(f"Expected `cpus_per_actor` to be 0 or more, got {cpus_per_actor}.")
    threads = max(1, int(total_cpus // num_actors)) if total_cpus else 1
    return Resources(num_actors, float(cpus_per_actor), float(gpus_per_actor), threads)


def thread_environment(threads: int) -> dict[str, Any]:
    """The actors' runtime environment: OpenMP sized for the machine from the start.

    Ray sets ``OMP_NUM_THREADS`` to an actor's whole CPUs (1 for a fraction). Raising
    PyTorch's count afterwards with ``torch.set_num_threads`` leaves the engines' side by
    side CPU workers oversubscribed, at about half the speed, so the count is set where
    the actor process starts instead.
    """
    return {"env_vars": {"OMP_NUM_THREADS": str(max(1, threads))}}


def set_torch_threads(threads: int) -> None:
    """This process's PyTorch on ``threads`` CPU threads, changed only where it is not
    already so (an actor's count; :func:`~opik_semantic_metrics.batching.cpu_parallel.use_threads`
    sets one worker thread's)."""
    import torch

    if torch.get_num_threads() != max(1, threads):
        torch.set_num_threads(max(1, threads))


#: The former name of :func:`set_torch_threads` (it read like
#: :func:`~opik_semantic_metrics.batching.cpu_parallel.use_threads`, which sets one thread's).
use_threads = set_torch_threads
