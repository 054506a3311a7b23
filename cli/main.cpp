// The `syncpoint` command's main(): the command itself is a function of the
// command library (cli/command.cpp), which a program of its own calls after
// registering its loops, models and data sets (<syncpoint/command.hpp>).
#include <syncpoint/command.hpp>

int main(int argc, char** argv) {
  return syncpoint::command_main(argc, argv);
}
