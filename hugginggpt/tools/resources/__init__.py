"""Resources of a run: the workspace, confined paths, URL downloads and media files.

``Workspace`` is the gate between what an LLM writes in a plan and what a model reads; the media
helpers load inputs and write generated outputs atomically under unique names.
"""

from hugginggpt.tools.resources.atomic import atomic_write
from hugginggpt.tools.resources.download import download, format_size
from hugginggpt.tools.resources.media import (
    check_kind,
    load_audio,
    load_image,
    resample,
    save_audio,
    save_image,
    save_video,
)
from hugginggpt.tools.resources.netguard import (
    ALLOW_PRIVATE_ENV,
    AddressPolicy,
    allow_any,
    public_only,
)
from hugginggpt.tools.resources.refs import (
    RESOURCE_REF,
    contains_resource_ref,
)
from hugginggpt.tools.resources.tables import read_table
from hugginggpt.tools.resources.workspace import MiB, Workspace, new_run_id

__all__ = [
    "ALLOW_PRIVATE_ENV",
    "RESOURCE_REF",
    "AddressPolicy",
    "MiB",
    "Workspace",
    "allow_any",
    "atomic_write",
    "check_kind",
    "contains_resource_ref",
    "download",
    "format_size",
    "load_audio",
    "load_image",
    "new_run_id",
    "public_only",
    "read_table",
    "resample",
    "save_audio",
    "save_image",
    "save_video",
]
