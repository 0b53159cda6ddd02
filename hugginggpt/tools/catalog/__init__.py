"""The model catalog: which Hub models (or local folders) can run each task, ranked by downloads."""

from hugginggpt.tools.catalog.catalog import (
    CatalogError,
    ModelCard,
    ModelCatalog,
    read_cards,
)

__all__ = ["CatalogError", "ModelCard", "ModelCatalog", "read_cards"]
