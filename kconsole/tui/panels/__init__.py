"""Dashboard panels, one module each; every panel redraws from caches when its inputs moved."""

from .base import Panel
from .drill import DrillPanel
from .etcd import EtcdPanel
from .events import EventsPanel
from .faults import FaultsPanel
from .header import HeaderPanel
from .leases import LeasesPanel
from .manifests import ManifestsPanel
from .resources import FilterError, ResourcesPanel
from .scheduling import SchedulingPanel

__all__ = ["DrillPanel", "EtcdPanel", "EventsPanel", "FaultsPanel", "FilterError", "HeaderPanel", "LeasesPanel",
           "ManifestsPanel", "Panel", "ResourcesPanel", "SchedulingPanel"]
