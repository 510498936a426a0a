"""Hardware truth, measured on a GPU and recorded: :mod:`~layoutlab.probe.atoms` (where the MMA and copy atoms put
data; ``python -m layoutlab.probe OUT.json``), :mod:`~layoutlab.probe.gmma` (the wgmma descriptor's reads),
:mod:`~layoutlab.probe.tma` (where TMA's bytes land), :mod:`~layoutlab.probe.banks` (shared-memory loads timed
against the bank model); their PTX kernels are :mod:`~layoutlab.probe.sources`. Each compares its record with the
CPU model on any machine.
"""
