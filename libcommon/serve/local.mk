# libcommon/serve: microscope serve. The route (pure), the server
# (libmicrohttpd), and the page: web/ built by npm (no dependencies, no
# network) into web/dist, turned into C by scripts/embed-web.mjs.
libcommon_a_SOURCES += libcommon/serve/serve.h libcommon/serve/route.c libcommon/serve/server.c
nodist_libcommon_a_SOURCES += libcommon/serve/assets.c
BUILT_SOURCES += libcommon/serve/assets.c
CLEANFILES += libcommon/serve/assets.c

# Every file of the page's sources: a change, an addition or a removal
# (the folder's time) builds the page again.
WEB_PAGE_FILES = $(top_srcdir)/web/package.json $(top_srcdir)/web/build.mjs \
	$(top_srcdir)/web/src $(shell find $(top_srcdir)/web/src -type f 2>/dev/null)

# npm runs the page's own build script only: nothing is installed, nothing
# fetched, no update check.
$(top_srcdir)/web/dist/index.html: $(WEB_PAGE_FILES)
	$(AM_V_GEN)npm_config_update_notifier=false $(NPM) run build --silent --prefix $(top_srcdir)/web

libcommon/serve/assets.c: $(top_srcdir)/web/dist/index.html $(top_srcdir)/scripts/embed-web.mjs
	@$(MKDIR_P) libcommon/serve
	$(AM_V_GEN)$(NODE) $(top_srcdir)/scripts/embed-web.mjs $(top_srcdir)/web/dist $@

EXTRA_DIST += scripts/embed-web.mjs web/API.md web/package.json web/package-lock.json web/build.mjs web/src

# The route over a capture built in memory: every path, status and body.
UNIT_TESTS += tests/unit/serve-route-test
tests_unit_serve_route_test_SOURCES = tests/unit/serve-route-test.c
tests_unit_serve_route_test_LDADD = $(MS_LIBS) $(CMOCKA_LIBS)
tests_unit_serve_route_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)

