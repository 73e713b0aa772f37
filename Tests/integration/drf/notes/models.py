from django.db import models


class Note(models.Model):
    """One note; `version` goes up by one with each update (syncd's VersionField=)."""
    title = models.CharField(max_length=40)
    body = models.TextField(blank=True, default="")
    version = models.IntegerField(default=1)
    client_id = models.CharField(max_length=64, blank=True, default="")

    class Meta:
        app_label = "notes"
        ordering = ["id"]
