"""The ``/ops`` dashboard's assets (a package so that they ship as package data)."""
