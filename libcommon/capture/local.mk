# libcommon/capture: sources, programs, unit tests and man pages of this layer.
