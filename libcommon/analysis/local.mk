# libcommon/analysis: sources, programs, unit tests and man pages of this layer.
