import os
import time

from rest_framework import serializers, status, viewsets
from rest_framework.pagination import LimitOffsetPagination
from rest_framework.response import Response

from notes.models import Note


class NoteSerializer(serializers.ModelSerializer):
    class Meta:
        model = Note
        fields = ["id", "title", "body", "version", "client_id"]
        read_only_fields = ["id"]


class NoteViewSet(viewsets.ModelViewSet):
    queryset = Note.objects.all()
    serializer_class = NoteSerializer

    def perform_create(self, serializer):
        # A server that works on a create for a while before it commits it (a queue, a slow trigger): a
        # listing read meanwhile does not have the row yet.
        time.sleep(float(os.environ.get("NOTES_COMMIT_DELAY", "0")))
        serializer.save()
        # A slow server: the row is committed (autocommit), the answer comes late.
        time.sleep(float(os.environ.get("NOTES_CREATE_DELAY", "0")))

    def update(self, request, *args, **kwargs):
        # Optimistic concurrency: a change must name the version it was made against.
        note = self.get_object()
        sent = request.data.get("version")
        if sent is not None and int(sent) != note.version:
            return Response({"version": [f"is {note.version}, the change was made against {sent}"]}, status=status.HTTP_409_CONFLICT)
        serializer = self.get_serializer(note, data={**request.data, "version": note.version + 1}, partial=kwargs.get("partial", False))
        serializer.is_valid(raise_exception=True)
        serializer.save()
        return Response(serializer.data)


class OffsetNoteViewSet(viewsets.ReadOnlyModelViewSet):
    """The same notes at /api/offset-notes/, paged by DRF's LimitOffsetPagination: {"count": N, "next": …,
    "previous": …, "results": […]} for ?limit=&offset= (the limit defaults to PAGE_SIZE)."""
    queryset = Note.objects.all()
    serializer_class = NoteSerializer
    pagination_class = LimitOffsetPagination
