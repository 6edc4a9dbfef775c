"""Energy optimizers (upstream ``zeus.optimizer``): ``zeuscpp.optimizer.power_limit``."""
