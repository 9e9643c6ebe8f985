"""The learned understander: features, model (weights in ``weights/nlu.npz``) and the
:class:`LearnedUnderstander` behind the :mod:`coordinator.understanding` seam. Pure
numpy; the weights are loaded once per process."""

from .model import NLUModel, shared_model
from .understander import LearnedUnderstander

__all__ = ["LearnedUnderstander", "NLUModel", "shared_model"]
