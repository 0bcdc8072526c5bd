# cmd/microscope: the front command. Stage commands are listed in their
# layer's local.mk next to the library code they wire.
bin_PROGRAMS += microscope
microscope_SOURCES = cmd/microscope.c
microscope_LDADD = $(MS_LIBS)
man_MANS += man/microscope.1
