"""The pages' forms, one module per page module of :mod:`designer.pages`.

Forms check shapes (numbers, choices, sizes); services and the engine check meaning, and their
located errors come back next to the fields they name.

Modules
-------
``topologies``  the New topology form (also the editor's Generate dialog)
``scenarios``   the scenario builder: scenario fields, workload patterns, a job workload, a
                viewer's run, and the forms the builder posts taken together
``cluster_jobs`` the builder's "Jobs" mode: jobs with placements sharing the cluster (as JSON)
``sharing``     grants, read-only links, ownership transfer, fork
``nccl``        the nccl-tests page: collective, sizes, protocol, channels, axes, real runs to overlay
``explore``     the Explore page: the options to vary (a checkbox per value) and the job mix
``compare``     the compare page's query: two results, two designs, or one side and a picker
``errors``      service and engine errors next to the fields they name
"""
