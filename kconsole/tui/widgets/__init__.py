"""Console widgets: the virtual table (only visible rows are drawn), its column fitting, sparklines."""

from .fit import Fit
from .sparkline import sparkline
from .vtable import Row, VirtualTable

__all__ = ["Fit", "Row", "VirtualTable", "sparkline"]
