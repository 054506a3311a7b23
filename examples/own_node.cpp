// Your own node program: the `syncpoint` command, plus the code your jobs
// run. Registering the autoencoder (autoencoder.hpp: its module and its loop)
// and handing the arguments to syncpoint::command_main makes this program a
// `syncpoint` that knows them: start the head, every node and the submitter
// from it, as a Ray cluster's workers import your module (docs/cluster.md,
// "Your own node program").
//
//   example_own_node head --port 7000 --token-file T
//   example_own_node node --join HEAD:7000 --token-file T        # on each machine
//   example_own_node submit --head HEAD:7000 --token-file T --model autoencoder --loop reconstruct
//     --optimizer adam --lr 0.002 --workers 4 --epochs 2 --out runs/ae     # (one command line)
#include "autoencoder.hpp"

#include <syncpoint/command.hpp>

int main(int argc, char** argv) {
  register_autoencoder();
  return syncpoint::command_main(argc, argv);
}
