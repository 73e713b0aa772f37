"""/api/notes/ and /api/notes/<id>/: DRF's DefaultRouter with its default trailing slash; the same notes at
/api/offset-notes/, read-only, paged by limit and offset."""
from django.urls import include, path
from rest_framework.routers import DefaultRouter

from notes.views import NoteViewSet, OffsetNoteViewSet

router = DefaultRouter()
router.register("notes", NoteViewSet)
router.register("offset-notes", OffsetNoteViewSet, basename="offset-note")
urlpatterns = [path("api/", include(router.urls))]
