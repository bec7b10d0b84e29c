// A Transformer layer's backward pass on a web page: one nn::TransformerEncoderLayer on two sequences of
// five tokens, each module call a box ("self_attn (MultiheadAttention)") that opens when clicked, and the
// step control replaying the engine's pass through them (viz/page.h).
//
//   minigrad-basics-encoder-layer-page [PAGE]    writes PAGE (default encoder_layer.html)
#include <iostream>
#include <string>

#include "minigrad/minigrad.h"

int main(int argc, char** argv) {
  using namespace minigrad;
  const std::string page = argc > 1 ? argv[1] : "encoder_layer.html";
  manual_seed(0);
  nn::TransformerEncoderLayer layer({.d_model = 16, .nhead = 2, .dim_feedforward = 32, .batch_first = true});
  layer.eval();                                                 // no dropout: fewer boxes to look at
  const Variable x(Tensor::normal({2, 5, 16}, 0.0, 1.0));       // (B, T, d_model)
  const Variable target(Tensor::normal({2, 5, 16}, 0.0, 1.0));  // (B, T, d_model)

  RecordGraph values;                  // what each op computed and saved, for the page
  nn::RecordModuleCalls calls(layer);  // each module call, for its box
  const Variable y = layer(x);
  const Variable loss = mse_loss(y, target);

  HtmlPageOptions options{.recording = &values, .title = "one TransformerEncoderLayer's backward pass"};
  for (const auto& call : calls.calls()) options.groups.push_back({call.label, call.inputs, call.output});
  write_html(loss, page, options);  // runs loss.backward()
  std::cout << "loss = " << loss.item() << "\n";
  std::cout << calls.calls().size() << " module calls; page written to " << page << "\n";
}
