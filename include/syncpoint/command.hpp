/// \file
/// The `syncpoint` command as functions: a program that registers loops,
/// models, data sets or protocols of its own and then hands its arguments to
/// one of these becomes a `syncpoint` of its own, which knows them. On a
/// cluster every process that runs the job's code runs such a program: the
/// head (it evaluates the model with the loop's evaluation), each node (its
/// workers run the loop), and `submit` (it checks the job), as a Ray worker
/// imports the user's module (docs/cluster.md, "Your own node program").
///
/// ```text
/// int main(int argc, char** argv) {
///   register_my_loops();                         // register_model, register_torch_loop, register_client_loop ...
///   return syncpoint::command_main(argc, argv);  // my-program head --port P | node --join H:P | submit ...
/// }
/// ```
/// (examples/own_node.cpp is such a program, run as a head and nodes by tests/test_cluster_own_program.cpp.)
///
/// Link syncpoint::command (find_package(syncpoint COMPONENTS command)).
#pragma once

namespace syncpoint {

/// `syncpoint <command> [options]`: every command (train, compare, head,
/// node, submit, status, ...) with the options `syncpoint <command> --help`
/// lists. Returns the exit status: 0 success, 2 bad arguments or input, 1 a
/// run that failed.
int command_main(int argc, char** argv);

/// `syncpoint node [options]`: argv holds the node's options only (e.g. --join HOST:PORT).
int node_main(int argc, char** argv);

/// `syncpoint head [options]`: argv holds the head's options only (e.g. --port P).
int head_main(int argc, char** argv);

}  // namespace syncpoint
