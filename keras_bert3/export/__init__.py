"""SavedModel writers: each task's export, whose `serving_default` takes raw strings."""
