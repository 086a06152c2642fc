"""The core: everything the rest of hierlab builds on, importing nothing else of hierlab.

taxonomy, exceptions, params (parameter constraints declared once per estimator class),
registry (method name -> estimator class), solver (the solver contract) and callbacks, losses
(one table of label losses shared by every family), regularizers, objective, cards (the method
card format) and the model protocol shared by the linear methods.
"""
