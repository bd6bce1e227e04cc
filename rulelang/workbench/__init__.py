"""The designer's workbench: compare, sweep, tournament, describe, reports, scale-out."""
