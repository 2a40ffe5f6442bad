"""Bateni, Golab, Hajiaghayi and Karloff: staleness and stretch of batched warehouse updates."""
