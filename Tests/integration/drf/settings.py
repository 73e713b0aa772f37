"""A minimal Django REST Framework project for syncd's real-server tests (Tests/integration/test_real_drf.py).

Hand-written, no generated boilerplate: one app (notes), a DefaultRouter with its trailing slashes,
PageNumberPagination, DEBUG=False (so Django answers a write to a URL without the slash with 301).
Settings come from the environment the test sets: NOTES_DB (the SQLite file the test asserts on),
NOTES_PAGE_SIZE, NOTES_CREATE_DELAY (seconds a create answers late, after committing).
"""
import os

SECRET_KEY = "syncd-tests-only"
DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1", "localhost"]
INSTALLED_APPS = ["django.contrib.contenttypes", "django.contrib.auth", "rest_framework", "notes"]
# CommonMiddleware does APPEND_SLASH: GET /api/notes/7 → 301 /api/notes/7/, and with DEBUG=False also a PUT.
MIDDLEWARE = ["django.middleware.common.CommonMiddleware"]
ROOT_URLCONF = "urls"
DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": os.environ["NOTES_DB"]}}
DEFAULT_AUTO_FIELD = "django.db.models.AutoField"
USE_TZ = True
REST_FRAMEWORK = {
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.PageNumberPagination",
    "PAGE_SIZE": int(os.environ.get("NOTES_PAGE_SIZE", "100")),
    "DEFAULT_AUTHENTICATION_CLASSES": [],
    "DEFAULT_PERMISSION_CLASSES": [],
    "UNAUTHENTICATED_USER": None,
}
