// Where the built-in data sets read when no folder is given: this machine's
// Debian packages (scripts/setup.sh installs them). Not installed: a program
// names its data's folder (data_request::dir, job_config::data_dir).
//
//   auto d = syncpoint::load_fashion_mnist(syncpoint::default_fashion_mnist_dir);
#pragma once

namespace syncpoint {

/// Train-images-idx3-ubyte.gz and friends: Debian's dataset-fashion-mnist.
inline const char* default_fashion_mnist_dir = "/usr/share/datasets/fashion-mnist";

/// --dataset text: Debian's fortunes package, about 2.6 MB of English text.
inline const char* default_text_path = "/usr/share/games/fortunes";

}  // namespace syncpoint
