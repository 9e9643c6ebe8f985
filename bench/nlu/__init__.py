"""Training and evaluating the learned understander (``callassist train nlu``, ``bench nlu``)."""
