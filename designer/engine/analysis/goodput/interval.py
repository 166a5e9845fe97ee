"""Checkpoint interval, effective training time ratio and spares: closed forms.

Notation (seconds): ``M`` the job's mean time to interruption, ``delta`` the time to write one
checkpoint (the job waits for it), ``R`` the time from an interruption to training again
(restart overhead + reading the checkpoint back), ``tau`` the compute time between two
checkpoints.

- Young's first-order optimum: ``tau = sqrt(2 · delta · M)`` — J. W. Young, "A first order
  approximation to the optimum checkpoint interval", Communications of the ACM 17(9), 1974.
- Daly's higher-order optimum, for ``delta < 2M``:
  ``tau = sqrt(2 delta M) · [1 + sqrt(delta / 2M) / 3 + (delta / 2M) / 9] − delta``, else ``M`` —
  J. T. Daly, "A higher order estimate of the optimum checkpoint interval for restart dumps",
  Future Generation Computer Systems 22 (2006), the higher-order estimate of the optimum.
- Effective training time ratio (useful compute / wall time) of Daly's complete model, in which
  failures arrive as a Poisson process (also during checkpoints and restarts):
  ``ETTR = tau / (M · e^(R/M) · (e^((tau + delta)/M) − 1))`` (Daly 2006, the complete model's wall time
  ``T_w = M e^(R/M) (e^((tau+delta)/M) − 1) · T_s / tau`` of a solve time ``T_s``).
  Derivation in docs/ENGINE.md, "Goodput": between two failures (an exponential gap ``g``) the
  job restarts, then keeps ``floor((g − R)⁺ / (tau + delta))`` intervals of ``tau``;
  ``E[floor] = e^(−R/M) / (e^((tau+delta)/M) − 1)`` and ``E[g] = M``.
- Spares: the smallest ``k`` with ``P(X ≤ k) ≥ availability`` for ``X`` ~ Poisson(failures of
  the class during one repair time) — enough spare units that a failed part is replaced at once
  with that probability.
"""
from __future__ import annotations

import math

import numpy as np

__all__ = ["young_interval_s", "daly_interval_s", "ettr", "ettr_curve", "poisson_quantile"]


def young_interval_s(delta_s: float, mttf_s: float) -> float:
    """Young's optimum checkpoint interval ``sqrt(2 · delta · M)`` (seconds).

    Parameters
    ----------
    delta_s : float
        Checkpoint write time (s), > 0.
    mttf_s : float
        Job mean time to interruption (s), > 0.

    Returns
    -------
    float
        Compute seconds between checkpoints.
    """
    return math.sqrt(2.0 * delta_s * mttf_s)


def daly_interval_s(delta_s: float, mttf_s: float) -> float:
    """Daly's higher-order optimum checkpoint interval (seconds); ``M`` when ``delta ≥ 2M``.

    Parameters
    ----------
    delta_s, mttf_s : float
        As :func:`young_interval_s`.

    Returns
    -------
    float
        ``sqrt(2 delta M) · [1 + sqrt(x)/3 + x/9] − delta`` with ``x = delta / 2M``.
    """
    if delta_s >= 2.0 * mttf_s:
        return mttf_s
    x = delta_s / (2.0 * mttf_s)
    return math.sqrt(2.0 * delta_s * mttf_s) * (1.0 + math.sqrt(x) / 3.0 + x / 9.0) - delta_s


def ettr(tau_s, delta_s: float, restart_s: float, mttf_s: float):
    """Effective training time ratio of Daly's model (useful compute / wall time).

    Parameters
    ----------
    tau_s : float or ndarray
        Compute seconds between checkpoints, > 0.
    delta_s : float
        Checkpoint write time (s), ≥ 0.
    restart_s : float
        Seconds from an interruption to training again, ≥ 0.
    mttf_s : float
        Job mean time to interruption (s), > 0 (``inf``: no failure, ETTR = tau / (tau + delta)).

    Returns
    -------
    float or ndarray
        ``tau / (M e^(R/M) (e^((tau+delta)/M) − 1))``, in (0, 1].
    """
    tau = np.asarray(tau_s, dtype=np.float64)
    if not math.isfinite(mttf_s):
        out = tau / (tau + delta_s)
    else:
        # A restart or an interval of hundreds of MTTFs overflows e^x to inf: the job never
        # completes an interval, and tau / inf = 0 is the right answer, not an error
        with np.errstate(over="ignore"):
            out = tau / (mttf_s * np.exp(restart_s / mttf_s) * np.expm1((tau + delta_s) / mttf_s))
    return float(out) if out.ndim == 0 else out


def ettr_curve(optimum_s: float, delta_s: float, restart_s: float, mttf_s: float,
               points: int = 61) -> dict:
    """ETTR over checkpoint intervals from optimum / 10 to optimum × 10 (log-spaced).

    Returns
    -------
    dict
        ``interval_s`` and ``ettr``: lists of ``points`` floats.
    """
    taus = optimum_s * np.logspace(-1.0, 1.0, points)
    return {"interval_s": taus.tolist(), "ettr": np.atleast_1d(ettr(taus, delta_s, restart_s, mttf_s)).tolist()}


def poisson_quantile(mean: float, probability: float) -> int:
    """Smallest ``k`` with ``P(X ≤ k) ≥ probability`` for ``X`` ~ Poisson(``mean``).

    Parameters
    ----------
    mean : float
        Expected count, ≥ 0.
    probability : float
        In (0, 1).

    Returns
    -------
    int
    """
    if mean <= 0.0:
        return 0
    k, pmf = 0, math.exp(-mean) if mean < 700 else 0.0
    if pmf == 0.0:  # e^-mean underflows: the normal approximation is exact enough there
        z = math.sqrt(2.0) * _erfinv(2.0 * probability - 1.0)
        return int(math.ceil(mean + z * math.sqrt(mean)))
    cdf = pmf
    while cdf < probability:
        k += 1
        pmf *= mean / k
        cdf += pmf
    return k


def _erfinv(y: float) -> float:
    """Inverse error function by Newton's method on :func:`math.erf` (|y| < 1)."""
    x = 0.0
    for _ in range(60):
        step = (math.erf(x) - y) / (2.0 / math.sqrt(math.pi) * math.exp(-x * x))
        x -= step
        if abs(step) < 1e-12:
            break
    return x
