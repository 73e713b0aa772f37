"""/api/notes/ and /api/notes/<id>/: DRF's DefaultRouter with its default trailing slash."""
from django.urls import include, path
from rest_framework.routers import DefaultRouter

from notes.views import NoteViewSet

router = DefaultRouter()
router.register("notes", NoteViewSet)
urlpatterns = [path("api/", include(router.urls))]
