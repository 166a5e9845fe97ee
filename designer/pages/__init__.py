"""The HTML pages, one module per page family, as ``api/views/`` is for the REST API.

Views are thin: they read through :mod:`designer.selectors` with the requesting user (another
user's object is a 404) and :mod:`designer.pages.selectors`, validate one form per action and
make one service call (:mod:`designer.services`), then render a template of
``templates/designer/``. Every page but sign-in and the share-link pages requires a session.
Routes are in ``designer/urls.py``.

Modules
-------
``topologies``  the list, New, the topology's page, revision diffs, the editor, host matrices
``scenarios``   the scenario builder (save, then run as the button asks) and a viewer's run
``jobs``        a job's progress page, its status JSON, cancel
``results``     a job's result, two results (or two designs' BOMs) compared and the pickers of
                the other side, the figure a result-page click asks for
``sharing``     the sharing page and its actions, fork, and the read-only share-link pages
``nccl``        the nccl-tests page: predicted busbw, a real run overlaid
``goodput``     the goodput page: failures × the design, checkpoint interval, one simulated run
``plan``        the physical-plan page: racks (elevation), costed BOM, cable schedule and its CSV
``diagnose``    the Diagnose page: measured nccl-tests runs → a diagnosis job; the page of its result
``explore``     the Explore page: a grid of fabric options × a job mix → an explore job; its result page
``profile``     the profile page and its API token actions
``selectors``   what the pages show beyond ``designer.selectors`` (read only): diffs, host
                matrices, the editor's configuration, job status, result and compare contexts
``forms/``      the pages' forms, one module per page module
"""
