"""Console widgets: the virtual table (only visible rows are drawn) and sparklines."""

from .sparkline import sparkline
from .vtable import Row, VirtualTable

__all__ = ["Row", "VirtualTable", "sparkline"]
