"""Screens pushed over the dashboard: describe, YAML, an object's history, logs, chain view, API request log, kube-proxy rules,
the referee's report, help, one manifest file's sync state, scheduling decision matrix, and the confirm /
prompt / choice dialogs."""

from .apilog import ApiLogScreen
from .chain import ChainScreen
from .confirm import ConfirmScreen
from .describe import DescribeScreen, YamlScreen
from .help import HelpScreen
from .history import HistoryScreen
from .logs import LogsScreen
from .manifest import ManifestScreen
from .matrix import MatrixScreen
from .prompt import ChoiceScreen, PromptScreen
from .proxy import ProxyScreen
from .referee import RefereeScreen

__all__ = ["ApiLogScreen", "ChainScreen", "ChoiceScreen", "ConfirmScreen", "DescribeScreen", "HelpScreen", "HistoryScreen", "LogsScreen",
           "ManifestScreen", "MatrixScreen", "PromptScreen", "ProxyScreen", "RefereeScreen",
           "YamlScreen"]
