// The built-in LibTorch models, each sized by the examples it is made for
// (model_input: shape and classes). Made for Fashion-MNIST (1x28x28, 10
// classes) they are the layers, in the order, they always were, so a run
// of them draws the same initial weights and trains to the same bytes.
#include "models/torch_nets.hpp"
#include "models/input_size.hpp"

#include <stdexcept>

namespace syncpoint {

namespace {

// An image's channels, height and width: CxHxW, or HxW as one channel.
struct image {
  int64_t channels = 1, height = 0, width = 0;
};

image image_of(const std::string& model, const model_input& in, int64_t smallest) {
  image im;
  if (in.shape.size() == 3)
    im = {in.shape[0], in.shape[1], in.shape[2]};
  else if (in.shape.size() == 2)
    im = {1, in.shape[0], in.shape[1]};
  else
    throw std::invalid_argument(model + ": takes images (examples of shape CxHxW or HxW), not examples of shape " +
                                shape_text(in.shape));
  if (im.height < smallest || im.width < smallest)
    throw std::invalid_argument(model + ": takes images of " + std::to_string(smallest) + "x" +
                                std::to_string(smallest) + " at least, not " + shape_text(in.shape));
  return im;
}

struct mlp : torch::nn::Module {
  torch::nn::Linear fc1, fc2;
  mlp(int64_t features, int64_t classes)
    : fc1(register_module("fc1", torch::nn::Linear(features, 256))),
      fc2(register_module("fc2", torch::nn::Linear(256, classes))) {}
  torch::Tensor forward(const torch::Tensor& x) { return fc2(torch::relu(fc1(x.flatten(1)))); }
};

// Two 5x5 convolutions, each pooled 2x2, and a linear layer (LeNet's shape).
struct cnn : torch::nn::Module {
  image in;
  torch::nn::Conv2d conv1, conv2;
  torch::nn::Linear fc;
  static int64_t after(int64_t side) { return ((side - 4) / 2 - 4) / 2; }  // the side after both pools
  cnn(image im, int64_t classes)
    : in(im),
      conv1(register_module("conv1", torch::nn::Conv2d(im.channels, 8, 5))),
      conv2(register_module("conv2", torch::nn::Conv2d(8, 16, 5))),
      fc(register_module("fc", torch::nn::Linear(16 * after(im.height) * after(im.width), classes))) {}
  torch::Tensor forward(const torch::Tensor& x) {
    auto h = torch::max_pool2d(torch::relu(conv1(x.view({-1, in.channels, in.height, in.width}))), 2);
    h = torch::max_pool2d(torch::relu(conv2(h)), 2);
    return fc(h.flatten(1));
  }
};

// Two 3x3 convolutions with BatchNorm and a shortcut (He et al. 2016); a
// 1x1 convolution on the shortcut where the shape changes.
struct basic_block : torch::nn::Module {
  torch::nn::Conv2d conv1{nullptr}, conv2{nullptr}, down{nullptr};
  torch::nn::BatchNorm2d bn1{nullptr}, bn2{nullptr}, down_bn{nullptr};

  basic_block(int64_t in, int64_t out, int64_t stride) {
    using torch::nn::Conv2dOptions;
    conv1 = register_module("conv1", torch::nn::Conv2d(Conv2dOptions(in, out, 3).stride(stride).padding(1).bias(false)));
    bn1 = register_module("bn1", torch::nn::BatchNorm2d(out));
    conv2 = register_module("conv2", torch::nn::Conv2d(Conv2dOptions(out, out, 3).padding(1).bias(false)));
    bn2 = register_module("bn2", torch::nn::BatchNorm2d(out));
    if (stride != 1 || in != out) {
      down = register_module("down", torch::nn::Conv2d(Conv2dOptions(in, out, 1).stride(stride).bias(false)));
      down_bn = register_module("down_bn", torch::nn::BatchNorm2d(out));
    }
  }
  torch::Tensor forward(const torch::Tensor& x) {
    auto h = torch::relu(bn1(conv1(x)));
    h = bn2(conv2(h));
    return torch::relu(h + (down ? down_bn(down(x)) : x));
  }
};

torch::nn::Conv2d stem_conv(int64_t in, int64_t out) {
  return torch::nn::Conv2d(torch::nn::Conv2dOptions(in, out, 3).padding(1).bias(false));
}

// A small ResNet: a 3x3 stem and a 2x2 pooling, then three residual blocks
// of 32, 64 and 128 channels (the last two halving the side), global average
// pooling and a linear layer. At 1x28x28 and 10 classes: 308,074 parameters
// and 1,344 BatchNorm statistics.
struct resnet : torch::nn::Module {
  image in;
  torch::nn::Conv2d stem;
  torch::nn::BatchNorm2d stem_bn{register_module("stem_bn", torch::nn::BatchNorm2d(32))};
  std::shared_ptr<basic_block> block1{register_module("block1", std::make_shared<basic_block>(32, 32, 1))};
  std::shared_ptr<basic_block> block2{register_module("block2", std::make_shared<basic_block>(32, 64, 2))};
  std::shared_ptr<basic_block> block3{register_module("block3", std::make_shared<basic_block>(64, 128, 2))};
  torch::nn::Linear fc;
  resnet(image im, int64_t classes)
    : in(im), stem(register_module("stem", stem_conv(im.channels, 32))),
      fc(register_module("fc", torch::nn::Linear(128, classes))) {}
  torch::Tensor forward(const torch::Tensor& x) {
    auto h = torch::max_pool2d(torch::relu(stem_bn(stem(x.view({-1, in.channels, in.height, in.width})))), 2);
    h = block3->forward(block2->forward(block1->forward(h)));
    return fc(torch::adaptive_avg_pool2d(h, {1, 1}).flatten(1));
  }
};

// ResNet-18 as it is trained on CIFAR-10 (He et al. 2016, with the 3x3 stem
// and no stem pooling of its CIFAR variants): four stages of two basic
// blocks, 64 to 512 channels, global average pooling and a linear layer.
// At 3x32x32 and 10 classes: 11,173,962 parameters, 9,600 BatchNorm statistics.
struct resnet18 : torch::nn::Module {
  image in;
  torch::nn::Conv2d stem;
  torch::nn::BatchNorm2d stem_bn{register_module("stem_bn", torch::nn::BatchNorm2d(64))};
  std::vector<std::shared_ptr<basic_block>> blocks;
  torch::nn::Linear fc{nullptr};
  resnet18(image im, int64_t classes) : in(im), stem(register_module("stem", stem_conv(im.channels, 64))) {
    int64_t channels = 64;
    for (int64_t stage = 0; stage < 4; ++stage) {
      int64_t out = 64 << stage;
      for (int64_t k = 0; k < 2; ++k) {
        auto name = "layer" + std::to_string(stage + 1) + "_" + std::to_string(k);
        blocks.push_back(register_module(name, std::make_shared<basic_block>(channels, out, k == 0 && stage > 0 ? 2 : 1)));
        channels = out;
      }
    }
    fc = register_module("fc", torch::nn::Linear(channels, classes));
  }
  torch::Tensor forward(const torch::Tensor& x) {
    auto h = torch::relu(stem_bn(stem(x.view({-1, in.channels, in.height, in.width}))));
    for (auto& b : blocks)
      h = b->forward(h);
    return fc(torch::adaptive_avg_pool2d(h, {1, 1}).flatten(1));
  }
};

}  // namespace

template <class Net>
torch_net net_of(std::shared_ptr<Net> m) {
  return {m, [m](const torch::Tensor& x) { return m->forward(x); }};
}

torch_net make_torch_net(const std::string& name, const model_input& in) {
  if (name == "mlp")
    return net_of(std::make_shared<mlp>(features(in), in.classes));
  if (name == "cnn")
    return net_of(std::make_shared<cnn>(image_of("cnn", in, 16), in.classes));
  if (name == "resnet")
    return net_of(std::make_shared<resnet>(image_of("resnet", in, 4), in.classes));
  if (name == "resnet18")
    return net_of(std::make_shared<resnet18>(image_of("resnet18", in, 8), in.classes));
  throw std::invalid_argument("no built-in LibTorch network '" + name + "'");
}

namespace {

std::unique_ptr<model> wrapped(const std::string& name, const model_input& in) {
  auto net = make_torch_net(name, in);
  return std::make_unique<torch_model>(net.module, net.forward);
}

}  // namespace

std::unique_ptr<model> make_torch_mlp(const model_input& in) {
  return wrapped("mlp", in);
}

std::unique_ptr<model> make_torch_cnn(const model_input& in) {
  return wrapped("cnn", in);
}

std::unique_ptr<model> make_torch_resnet(const model_input& in) {
  return wrapped("resnet", in);
}

std::unique_ptr<model> make_torch_resnet18(const model_input& in) {
  return wrapped("resnet18", in);
}

}  // namespace syncpoint
