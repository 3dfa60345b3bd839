"""Logs (``l``): one container's log from the API's pods/log subresource, as ``kubectl logs`` reads it.

Following (the default) shows what is there and then each line as the container writes it, until
the instance exits; ``c`` picks the next container, ``p`` the previous (terminated) instance, ``w``
wraps long lines. The stream is closed whenever the screen stops showing it.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer, RichLog, Static

from kconsole.client import Client, StatusError
from kconsole.tui.keymap import screen_bindings

#: Lines kept on screen (the kubelet keeps 5,000 per container instance).
MAX_LINES = 5000
#: While following, a container that has not started is asked again this often (simulated seconds).
RETRY_SECONDS = 1.0



class LogsScreen(Screen[None]):
    DEFAULT_CSS = """
    LogsScreen > #title { height: 1; background: $primary; color: $text; padding: 0 1; text-style: bold; }
    LogsScreen > #state { height: 1; color: $text-muted; padding: 0 1; }
    LogsScreen > RichLog { height: 1fr; padding: 0 1; }
    """
    BINDINGS = [Binding("escape,q", "app.pop_screen", "Back", id="screen.back"),
                *screen_bindings("logs.follow", "logs.container", "logs.previous", "logs.wrap")]

    def __init__(self, client: Client, namespace: str, pod: str, containers: list[str],
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep) -> None:
        super().__init__()
        #: The cluster clock's sleep: a container still starting is asked again each simulated second.
        self.sleep = sleep
        if not containers:
            raise ValueError(f"pod {namespace}/{pod} has no containers")
        self.client = client
        self.namespace = namespace
        self.pod = pod
        self.containers = containers
        self.container = containers[0]
        self.follow = True
        self.previous = False
        self.wrap = False
        self.lines: deque[str] = deque(maxlen=MAX_LINES)
        #: What the last read said when it ended or failed ("" while streaming).
        self.state = ""
        self.title_bar = Static("", id="title", markup=False)
        self.state_bar = Static("", id="state", markup=False)
        self.log_view = RichLog(wrap=False, markup=False, highlight=False, max_lines=MAX_LINES, auto_scroll=True)

    def compose(self) -> ComposeResult:
        yield self.title_bar
        yield self.state_bar
        yield self.log_view
        yield Footer()

    def on_mount(self) -> None:
        self.reload()

    def text(self) -> str:
        """The lines shown now (for tests and copying)."""
        return "\n".join(self.lines)

    def _describe(self) -> str:
        mode = "previous instance" if self.previous else ("following" if self.follow else "snapshot")
        others = f" (c: {len(self.containers)} containers)" if len(self.containers) > 1 else ""
        return f"Logs · {self.namespace}/{self.pod} · container {self.container}{others} · {mode}" \
               f"{' · wrap' if self.wrap else ''}"

    def _show_state(self) -> None:
        self.title_bar.update(self._describe())
        self.state_bar.update(self.state or "f follow · c container · p previous · w wrap · esc back")

    def reload(self) -> None:
        """Read again with the current choices (the old stream, if any, is closed by the worker's cancel)."""
        self.lines.clear()
        self.log_view.clear()
        self.state = "reading…"
        self._show_state()
        self.run_worker(self._read(), group="logs", exclusive=True)

    def _add(self, line: str) -> None:
        self.lines.append(line)
        self.log_view.write(line)

    async def _read(self) -> None:
        follow = self.follow and not self.previous
        while True:
            try:
                result: Any = await self.client.logs(self.namespace, self.pod, container=self.container,
                                                     follow=follow, previous=self.previous)
                break
            except StatusError as err:
                if not follow or err.code != 400:
                    self.state = f"error: {err.message}"
                    self._show_state()
                    return
                # Not started yet (ContainerCreating, back-off): kubectl would fail; a console waits.
                self.state = f"waiting: {err.message}"
                self._show_state()
                await self.sleep(RETRY_SECONDS)
        if isinstance(result, str):
            for line in result.splitlines():
                self._add(line)
            self.state = "" if not follow else "the container is not running: nothing more will be written"
            self._show_state()
            return
        self.state = ""
        self._show_state()
        try:
            async for line in result:
                self._add(line)
            self.state = "the container exited: the stream ended"
            self._show_state()
        finally:
            await result.close()

    def action_toggle_follow(self) -> None:
        self.follow = not self.follow
        if self.follow:
            self.previous = False
        self.reload()

    def action_next_container(self) -> None:
        if len(self.containers) == 1:
            self.notify(f"pod {self.pod} has one container", severity="warning")
            return
        self.container = self.containers[(self.containers.index(self.container) + 1) % len(self.containers)]
        self.reload()

    def action_toggle_previous(self) -> None:
        self.previous = not self.previous
        self.reload()

    def action_toggle_wrap(self) -> None:
        self.wrap = not self.wrap
        self.log_view.wrap = self.wrap
        self.log_view.clear()
        for line in self.lines:
            self.log_view.write(line)
        self._show_state()
