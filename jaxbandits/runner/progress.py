"""Progress of a run over seed-steps (runs x rounds): a rich bar, plain lines on stderr for logs,
or nothing. Never changes results."""

from __future__ import annotations

import sys
import time

__all__ = ["Progress", "progress_mode"]


def progress_mode(progress) -> str | None:
    """``"bar"``, ``"lines"`` or None (nothing) for the ``progress`` argument."""
    if progress is None:
        return "bar" if sys.stderr.isatty() else None
    if isinstance(progress, bool):
        return "bar" if progress else None
    if isinstance(progress, str) and progress in ("bar", "lines"):
        return progress
    raise ValueError(f"progress must be None, True, False, 'bar' or 'lines', got {progress!r}")


class Progress:
    """Progress over seed-steps (runs x rounds) with the throughput: a rich bar (``"bar"``),
    plain lines on stderr (``"lines"``: at the start, whenever 10% more is done or 30 s have
    passed, and at the end), or nothing (None). Both show the compile phase."""

    def __init__(self, mode: str | None, label: str, total: int, runs: int):
        self.mode, self.label, self.total, self.runs = mode, label, total, runs
        self.done0 = self.wall0 = self.bar = None
        self.compiling_shown = False
        self.latest = None  # (done, wall) of the last advance
        self.last = None  # (done, wall, time) of the last line printed

    def __enter__(self):
        if self.mode == "bar":
            from rich.progress import (
                BarColumn,
                Progress,
                TaskProgressColumn,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            self.bar = Progress(
                TextColumn("[bold]{task.description}"), BarColumn(), TaskProgressColumn(),
                TextColumn("{task.fields[runs]} runs, {task.fields[rate]} seed-steps/s"),
                TimeElapsedColumn(), TimeRemainingColumn(), transient=False,
            )
            self.bar.start()
            self.task = self.bar.add_task(self.label, total=self.total, runs=self.runs,
                                          rate="-")
        return self

    def compiling(self) -> None:
        """A program is about to be compiled (shown once however many programs follow)."""
        if self.compiling_shown:
            return
        self.compiling_shown = True
        if self.bar is not None:
            self.bar.update(self.task, description=f"compiling {self.label}")
        elif self.mode == "lines":
            self._print(f"compiling {self.label} ...")

    def compiled(self, seconds: float) -> None:
        """The compile phase is over; ``seconds`` spent compiling."""
        if not self.compiling_shown:
            return
        if self.bar is not None:
            self.bar.update(self.task, description=self.label)
        elif self.mode == "lines":
            self._print(f"{self.label} compiled in {seconds:.1f} s")

    def advance(self, done: int, wall: float) -> None:
        """``done`` seed-steps played so far, ``wall`` seconds spent playing them."""
        if self.done0 is None:
            self.done0, self.wall0 = done, wall
        self.latest = (done, wall)
        if self.bar is not None:
            rate = self._rate(done, wall)
            self.bar.update(self.task, completed=done, rate=f"{rate:,.0f}" if rate else "-")
        elif self.mode == "lines":
            now = time.perf_counter()
            if (self.last is None or done - self.last[0] >= self.total / 10
                    or now - self.last[2] >= 30):
                self._line(done, wall, now)

    def __exit__(self, exc_type, *exc):
        if self.bar is not None:
            self.bar.stop()
        elif self.mode == "lines" and exc_type is None and self.last is not None \
                and self.last[:2] != self.latest:  # the final line
            self._line(*self.latest, time.perf_counter())

    def _rate(self, done: int, wall: float) -> float:
        seconds = wall - self.wall0
        return (done - self.done0) / seconds if seconds > 0 else 0.0

    def _line(self, done: int, wall: float, now: float) -> None:
        rate = self._rate(done, wall)
        eta = _clock((self.total - done) / rate) if rate else ("0:00:00" if done >= self.total
                                                               else "-")
        percent = 100 * done // max(self.total, 1)
        self._print(f"{self.label} {percent:3d}% {done:,}/{self.total:,} seed-steps, "
                    f"{f'{rate:,.0f}' if rate else '-'} seed-steps/s, {_clock(wall)} elapsed, "
                    f"ETA {eta}")
        self.last = (done, wall, now)

    @staticmethod
    def _print(message: str) -> None:
        print(f"jaxbandits: {message}", file=sys.stderr, flush=True)


def _clock(seconds: float) -> str:
    """``H:MM:SS``."""
    minutes, secs = divmod(int(round(seconds)), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}"
