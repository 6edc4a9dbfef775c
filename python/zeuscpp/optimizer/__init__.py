"""Energy optimizers (upstream ``zeus.optimizer``): ``zeuscpp.optimizer.power_limit`` and
``zeuscpp.optimizer.pipeline_frequency`` (Perseus)."""
