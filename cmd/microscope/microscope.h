/*
 * The front command's subcommands: each is an adapter that parses its own
 * options (argv[0] is the subcommand's name) and runs stages or library
 * code. cmd/microscope.c only dispatches.
 */
#ifndef MS_CMD_MICROSCOPE_MICROSCOPE_H
#define MS_CMD_MICROSCOPE_MICROSCOPE_H

#define MS_DEFAULT_CAPTURE "microscope.msc"

int ms_front_record(int argc, char **argv);
int ms_front_report(int argc, char **argv);
int ms_front_convert(int argc, char **argv);
int ms_front_symbolize(int argc, char **argv);
int ms_front_serve(int argc, char **argv);

#endif
