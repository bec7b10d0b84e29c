// Attention and positional encoding: the chapter's numbers and the masks.
#include "examples/textbook/positional_facts.h"
#include "test_helpers.h"

using namespace minigrad;
using namespace minigrad::nn;
using namespace minigrad::testing;

BOOST_AUTO_TEST_SUITE(attention)

BOOST_AUTO_TEST_CASE(the_chapter_example_has_the_chapter_shape) {
  // d2l: MultiHeadAttention(100, 5, 0.5), eval, X = ones(2, 4, 100), valid_lens [3, 2] -> (2, 4, 100)
  MultiHeadAttention attention(100, 5, 0.5);
  attention.eval();
  const Variable X(Tensor::ones({2, 4, 100}));
  const Variable Y = attention(X, X, X, {.valid_lens = Tensor::from_vector<int64_t>({3, 2}, {2})});
  BOOST_TEST(Y.shape() == (Shape{2, 4, 100}));
  BOOST_TEST(attention.attention_weights().shape() == (Shape{2, 5, 4, 4}));
  // Identical keys, so the valid ones share the weight equally and the masked ones get none.
  expect_close(attention.attention_weights().select(0, 0).select(0, 2).select(0, 1),
               {1.0 / 3, 1.0 / 3, 1.0 / 3, 0});
  expect_close(attention.attention_weights().select(0, 1).select(0, 4).select(0, 3), {0.5, 0.5, 0, 0});
}

BOOST_AUTO_TEST_CASE(each_mask_kind_hides_the_right_keys) {
  DotProductAttention attention;
  const Variable q(Tensor::zeros({2, 3, 2})), k(Tensor::zeros({2, 3, 2})), v(Tensor::normal({2, 3, 2}));
  // Zero scores: weights are uniform over whatever is visible.
  attention(q, k, v, {.valid_lens = Tensor::from_vector<int64_t>({1, 2, 3, 3, 1, 2}, {2, 3})});
  expect_close(attention.attention_weights().select(0, 0), {1, 0, 0, 0.5, 0.5, 0, 1.0 / 3, 1.0 / 3, 1.0 / 3});
  attention(q, k, v, {.key_padding_mask = Tensor::from_values({0, 1, 0, 1, 1, 0}, {2, 3}, DType::Bool)});
  expect_close(attention.attention_weights().select(0, 1).select(0, 0), {0, 0, 1});
  attention(q, k, v, {.causal = true});
  expect_close(attention.attention_weights().select(0, 0), {1, 0, 0, 0.5, 0.5, 0, 1.0 / 3, 1.0 / 3, 1.0 / 3});
  // Combined: causal and a length of 2 for sequence 1.
  attention(q, k, v, {.valid_lens = Tensor::from_vector<int64_t>({3, 2}, {2}), .causal = true});
  expect_close(attention.attention_weights().select(0, 1).select(0, 2), {0.5, 0.5, 0});
  // Every key hidden: weights of 0, softmax's convention for a fully masked row (not NaN, not uniform).
  attention(q, k, v, {.valid_lens = Tensor::from_vector<int64_t>({0, 3}, {2})});
  expect_close(attention.attention_weights().select(0, 0).select(0, 0), {0, 0, 0});
  expect_error<ShapeError>(
      [&] {
        attention(q, k, v, {.valid_lens = Tensor::from_vector<int64_t>({1, 2, 3}, {3})});
      },
      "attention mask: valid_lens must be (2) or (2, 3), got [3]");
  // A length past the 3 keys would mask nothing (as PyTorch's LSTM, minigrad's refuses the same).
  expect_error<ValueError>(
      [&] {
        attention(q, k, v, {.valid_lens = Tensor::from_vector<int64_t>({3, 4}, {2})});
      },
      "attention mask: valid_lens[1] = 4 is not in 0..3, the number of keys");
  expect_error_containing<ValueError>(
      [&] {
        attention(q, k, v, {.valid_lens = Tensor::from_vector<int64_t>({3, -1}, {2})});
      },
      "valid_lens[1] = -1 is not in 0..3");
  expect_error<DTypeError>(
      [&] {
        attention(q, k, v, {.valid_lens = Tensor::from_vector<float>({1, 2}, {2})});
      },
      "attention mask: valid_lens must be int64, got float32; convert with .to(DType::Int64)");
}

BOOST_AUTO_TEST_CASE(a_nan_score_shows_in_attention_and_a_masked_one_does_not) {
  // Softmax's conventions hold in attention: a NaN in a visible key's score makes that query's weights
  // NaN; a NaN behind the mask changes nothing; a query with every key masked gets weights of 0.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const Variable scores(Tensor::from_values({nan, 1, 2, 0, 0, nan, 3, 3, 3}, {1, 3, 3}, DType::Float64));
  const Tensor weights =
      nn::masked_softmax(scores, {.valid_lens = Tensor::from_vector<int64_t>({2}, {1})}).data();
  const std::vector<double> w = weights.to_vector();
  for (int i = 0; i < 3; ++i) BOOST_TEST(std::isnan(w[i]));  // row 0: a visible NaN
  expect_close(weights.select(1, 1), {0.5, 0.5, 0}, 1e-15);  // row 1: its NaN is masked
  const Tensor none =
      nn::masked_softmax(scores, {.valid_lens = Tensor::from_vector<int64_t>({0}, {1})}).data();
  expect_close(none.select(1, 2), {0, 0, 0}, 0);
}

BOOST_AUTO_TEST_CASE(cross_attention_takes_queries_keys_and_values_of_different_sizes) {
  MultiHeadAttention attention(
      {.num_hiddens = 8, .num_heads = 2, .query_size = 5, .key_size = 3, .value_size = 7});
  const Variable queries(Tensor::normal({2, 4, 5})), keys(Tensor::normal({2, 6, 3})),
      values(Tensor::normal({2, 6, 7}));
  const Variable out = attention(queries, keys, values);
  BOOST_TEST(out.shape() == (Shape{2, 4, 8}));
  BOOST_TEST(attention.attention_weights().shape() == (Shape{2, 2, 4, 6}));
  BOOST_TEST(attention.W_k->weight.shape() == (Shape{8, 3}));
  expect_error<ValueError>(
      [] { MultiHeadAttention(10, 3, 0.0); },
      "MultiHeadAttention: num_hiddens (10) must be a positive multiple of num_heads (3)");
}

BOOST_AUTO_TEST_CASE(positional_encoding_follows_the_formula) {
  const int64_t d = 32, n = 60;
  const Tensor P = PositionalEncoding::sinusoids(n, d);
  for (int64_t i : {0, 1, 7, 59}) {
    for (int64_t j = 0; j < d / 2; ++j) {
      const double angle = double(i) / std::pow(10000.0, 2.0 * double(j) / double(d));
      BOOST_TEST(P.at({i, 2 * j}) == std::sin(angle));
      BOOST_TEST(P.at({i, 2 * j + 1}) == std::cos(angle));
    }
  }
  // forward adds P[:T] (dropout off in eval)
  PositionalEncoding pe(d, 0.5, n);
  pe.eval();
  const Variable out = pe(Variable(Tensor::zeros({2, 5, d})));
  expect_close(out.data().select(0, 1), P.slice(0, 0, 5).to_vector(), 1e-7);
  expect_error<ShapeError>(
      [&] {
        pe(Variable(Tensor::zeros({1, 61, d})));
      },
      "PositionalEncoding: expects (batch, steps <= 60, 32), got [1,61,32]");
}

BOOST_AUTO_TEST_CASE(a_fixed_rotation_maps_every_position_to_its_offset) {
  // For each offset δ and column pair j, one 2x2 rotation by δ·ω_j takes (P[i,2j], P[i,2j+1]) to
  // (P[i+δ,2j], P[i+δ,2j+1]) for every i: position i+δ is a linear function of position i.
  const Tensor P = PositionalEncoding::sinusoids(200, 32);
  for (int64_t delta : {1, 2, 5, 17, 100})
    BOOST_TEST(textbook::max_rotation_error(P, delta) < 1e-12, "delta " << delta);
  // The check can fail: the book's variant of the table is not rotated by the standard frequencies.
  BOOST_TEST(textbook::max_rotation_error(textbook::book_positional_encoding(200, 32), 5) > 0.1);
}

BOOST_AUTO_TEST_CASE(learnable_positions_are_parameters) {
  PositionalEncoding learned({.num_hiddens = 4, .dropout = 0, .max_len = 8, .learnable = true});
  BOOST_TEST(learned.parameters().size() == 1u);
  BOOST_TEST(learned.named_buffers().empty());
  BOOST_TEST(PositionalEncoding(4, 0.0, 8).parameters().empty());
}

BOOST_AUTO_TEST_CASE(encoder_layers_keep_the_shape_and_norm_placement_matters) {
  manual_seed(3);
  EncoderLayer post({.num_hiddens = 8, .ffn_num_hiddens = 16, .num_heads = 2});
  manual_seed(3);
  EncoderLayer pre({.num_hiddens = 8, .ffn_num_hiddens = 16, .num_heads = 2, .norm_first = true});
  const Variable x(Tensor::normal({2, 5, 8}));
  const Variable a = post(x), b = pre(x);
  BOOST_TEST(a.shape() == (Shape{2, 5, 8}));
  BOOST_TEST(b.shape() == (Shape{2, 5, 8}));
  // Post-norm output rows are normalized (mean 0, variance 1); pre-norm ones are not.
  BOOST_TEST(std::abs(mean(a.data().select(0, 0).select(0, 0)).item()) < 1e-5);
  BOOST_TEST(std::abs(mean(b.data().select(0, 0).select(0, 0)).item()) > 1e-3);
  TransformerEncoder encoder({.layer = {.num_hiddens = 8, .ffn_num_hiddens = 8, .num_heads = 2},
                              .num_layers = 3,
                              .tokens = {.vocab_size = 20}});
  const Variable out = encoder(Tensor::from_vector<int64_t>({1, 2, 3, 4, 5, 6}, {2, 3}),
                               {.valid_lens = Tensor::from_vector<int64_t>({3, 1}, {2})});
  BOOST_TEST(out.shape() == (Shape{2, 3, 8}));
  BOOST_TEST(encoder.attention_weights().size() == 3u);
  // Sequence 1 has one valid token: every query attends only to it, in every layer and head.
  for (const Tensor& w : encoder.attention_weights())
    expect_close(w.select(0, 1).select(0, 1).select(0, 2), {1, 0, 0});
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(fused_attention)

// The largest absolute difference between two tensors of one shape; NaN where exactly one is NaN.
double max_difference(const Tensor& a, const Tensor& b) {
  BOOST_REQUIRE(a.shape() == b.shape());
  const std::vector<double> x = a.to_vector(), y = b.to_vector();
  double worst = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    if (std::isnan(x[i]) != std::isnan(y[i])) return NAN;
    if (!std::isnan(x[i])) worst = std::max(worst, std::abs(x[i] - y[i]));
  }
  return worst;
}

// Both kernels on the same inputs: the output, the weights and the three gradients.
struct KernelRun {
  Tensor output, weights, dq, dk, dv;
};
KernelRun run_kernel(AttentionKernel kernel, const Tensor& q, const Tensor& k, const Tensor& v,
                     const Tensor& g, const AttentionMask& mask, double dropout) {
  Variable vq(q.clone(), true), vk(k.clone(), true), vv(v.clone(), true);
  AttentionResult r = scaled_dot_product_attention(
      vq, vk, vv, {.mask = mask, .dropout = dropout, .seed = 99, .kernel = kernel});
  r.output.backward(g);
  return {r.output.data(), r.weights, vq.grad(), vk.grad(), vv.grad()};
}

BOOST_AUTO_TEST_CASE(fused_and_composed_kernels_agree_for_every_mask_kind) {
  // Sizes that make the fused kernel work in several blocks of query rows, whatever the L2 cache (a block is
  // at most 1 MB: 238 rows of 1,100 float32 scores), with n_q != n_k, 2 heads, and many groups for the
  // threads to share.
  const int64_t B = 3, h = 2, n_q = 300, n_k = 1100, d = 8, d_v = 5;
  BOOST_REQUIRE(attention_rows_per_block(n_q, n_k, sizeof(float)) < n_q);
  std::vector<int64_t> per_query(B * n_q);
  for (int64_t i = 0; i < B * n_q; ++i) per_query[i] = (i * 37) % (n_k + 1);  // 0 included: fully masked rows
  std::vector<double> padding(B * n_k);
  for (int64_t i = 0; i < B * n_k; ++i) padding[i] = (i % 7 == 3);
  const std::vector<std::pair<std::string, AttentionMask>> masks = {
      {"none", {}},
      {"valid_lens per sequence", {.valid_lens = Tensor::from_vector<int64_t>({n_k, 0, 123}, {B})}},
      {"valid_lens per query", {.valid_lens = Tensor::from_vector<int64_t>(per_query, {B, n_q})}},
      {"key padding", {.key_padding_mask = Tensor::from_values(padding, {B, n_k}, DType::Bool)}},
      {"causal", {.causal = true}},
      {"all three",
       {.valid_lens = Tensor::from_vector<int64_t>({n_k, 0, 123}, {B}),
        .key_padding_mask = Tensor::from_values(padding, {B, n_k}, DType::Bool),
        .causal = true}},
  };
  for (DType dtype : {DType::Float32, DType::Float64}) {
    const double tol = dtype == DType::Float32 ? 2e-5 : 1e-12;
    Generator gen(5);
    const Tensor q = Tensor::normal({B, h, n_q, d}, 0, 1, dtype, &gen);
    const Tensor k = Tensor::normal({B, h, n_k, d}, 0, 1, dtype, &gen);
    const Tensor v = Tensor::normal({B, h, n_k, d_v}, 0, 1, dtype, &gen);
    const Tensor g = Tensor::normal({B, h, n_q, d_v}, 0, 1, dtype, &gen);
    for (const auto& [name, mask] : masks) {
      for (double dropout : {0.0, 0.25}) {
        const KernelRun fused = run_kernel(AttentionKernel::Fused, q, k, v, g, mask, dropout);
        const KernelRun composed = run_kernel(AttentionKernel::Composed, q, k, v, g, mask, dropout);
        const std::string what =
            std::string(dtype_name(dtype)) + ", " + name + ", dropout " + std::to_string(dropout);
        BOOST_TEST(max_difference(fused.output, composed.output) <= tol, what << ": output");
        BOOST_TEST(max_difference(fused.weights, composed.weights) <= tol, what << ": weights");
        BOOST_TEST(max_difference(fused.dq, composed.dq) <= tol, what << ": dQ");
        BOOST_TEST(max_difference(fused.dk, composed.dk) <= tol, what << ": dK");
        BOOST_TEST(max_difference(fused.dv, composed.dv) <= tol, what << ": dV");
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(a_nan_in_a_masked_keys_value_gives_the_same_gradients_in_both_kernels) {
  // PyTorch 1.13, masked_fill(-inf), softmax and a product, with key 2 masked and V[2] holding a NaN: the
  // output's first column is NaN (0·NaN), dQ and the visible keys' dK are NaN, and the masked key's dK and
  // dV are 0.
  for (DType dtype : {DType::Float32, DType::Float64}) {
    Generator gen(2);
    const Tensor q = Tensor::normal({1, 2, 3}, 0, 1, dtype, &gen),
                 k = Tensor::normal({1, 3, 3}, 0, 1, dtype, &gen);
    Tensor v = Tensor::normal({1, 3, 2}, 0, 1, dtype, &gen);
    v.select(0, 0).select(0, 2).select(0, 0).fill_(std::numeric_limits<double>::quiet_NaN());
    const Tensor g = Tensor::ones({1, 2, 2}, dtype);
    const AttentionMask mask{.valid_lens = Tensor::from_vector<int64_t>({2}, {1})};
    const KernelRun fused = run_kernel(AttentionKernel::Fused, q, k, v, g, mask, 0);
    const KernelRun composed = run_kernel(AttentionKernel::Composed, q, k, v, g, mask, 0);
    BOOST_TEST(max_difference(fused.output, composed.output) <= 1e-6);
    BOOST_TEST(max_difference(fused.dq, composed.dq) <= 1e-6);
    BOOST_TEST(max_difference(fused.dk, composed.dk) <= 1e-6);
    BOOST_TEST(max_difference(fused.dv, composed.dv) <= 1e-6);
    expect_equal(fused.dk.select(0, 0).select(0, 2), {0, 0, 0});
    expect_equal(fused.dv.select(0, 0).select(0, 2), {0, 0});
    BOOST_TEST(std::isnan(fused.dk.at({0, 0, 0})));
    BOOST_TEST(std::isnan(fused.dq.at({0, 1, 2})));
  }
}

BOOST_AUTO_TEST_CASE(multi_head_views_are_read_in_place_and_results_keep_their_layout) {
  // Q, K, V as multi-head attention makes them: (B, h, n, head) views of (B, n, h, head) tensors. The fused
  // kernel reads them in place and writes its output and gradients in the same (B, n, h, head) order, so
  // that merging the heads back is a view; the numbers are the composed kernel's.
  Generator gen(8);
  auto heads_view = [&](int64_t n, int64_t width) {
    return Tensor::normal({2, n, 3, width}, 0, 1, DType::Float64, &gen).permute({0, 2, 1, 3});
  };
  const Tensor q = heads_view(5, 4), k = heads_view(7, 4), v = heads_view(7, 6);
  const Tensor g = heads_view(5, 6);
  const AttentionMask mask{.valid_lens = Tensor::from_vector<int64_t>({7, 3}, {2}), .causal = true};
  Variable vq(q, true), vk(k, true), vv(v, true);
  AttentionResult fused = scaled_dot_product_attention(
      vq, vk, vv, {.mask = mask, .dropout = 0.2, .seed = 99});  // run_kernel's seed
  fused.output.backward(g);
  const KernelRun composed = run_kernel(AttentionKernel::Composed, q, k, v, g, mask, 0.2);
  BOOST_TEST(max_difference(fused.output.data(), composed.output) <= 1e-12);
  BOOST_TEST(max_difference(vq.grad(), composed.dq) <= 1e-12);
  BOOST_TEST(max_difference(vk.grad(), composed.dk) <= 1e-12);
  BOOST_TEST(max_difference(vv.grad(), composed.dv) <= 1e-12);
  BOOST_TEST(fused.output.data().permute({0, 2, 1, 3}).is_contiguous());
  // (A leaf's .grad is a copy; the kernel's own gradients keep the layout.)
  const AttentionGradients grads =
      attention_backward(g, q, k, v, fused.weights, 0.5, 0.2, 99, {true, true, true});
  BOOST_TEST(grads.q.permute({0, 2, 1, 3}).is_contiguous());
  BOOST_TEST(grads.k.permute({0, 2, 1, 3}).is_contiguous());
  BOOST_TEST(grads.v.permute({0, 2, 1, 3}).is_contiguous());
}

BOOST_AUTO_TEST_CASE(fully_masked_rows_and_nans_behave_as_in_softmax) {
  Generator gen(2);
  const Tensor k = Tensor::normal({2, 4, 3}, 0, 1, DType::Float64, &gen);
  const Tensor v = Tensor::normal({2, 4, 2}, 0, 1, DType::Float64, &gen);
  Tensor q = Tensor::normal({2, 3, 3}, 0, 1, DType::Float64, &gen);
  // Sequence 1 has no valid key: its weights and outputs are 0, and so are its gradients.
  const AttentionMask mask{.valid_lens = Tensor::from_vector<int64_t>({4, 0}, {2})};
  const Tensor g = Tensor::ones({2, 3, 2}, DType::Float64);
  const KernelRun fused = run_kernel(AttentionKernel::Fused, q, k, v, g, mask, 0);
  BOOST_TEST(max(abs(fused.weights.select(0, 1))).item() == 0);
  BOOST_TEST(max(abs(fused.output.select(0, 1))).item() == 0);
  BOOST_TEST(max(abs(fused.dq.select(0, 1))).item() == 0);
  // A NaN in one query makes that query's weights and output NaN, and nothing else.
  q.select(0, 0).select(0, 1).select(0, 0).fill_(NAN);
  const KernelRun with_nan = run_kernel(AttentionKernel::Fused, q, k, v, g, {}, 0);
  const KernelRun reference = run_kernel(AttentionKernel::Composed, q, k, v, g, {}, 0);
  BOOST_TEST(std::isnan(with_nan.weights.select(0, 0).select(0, 1).to_vector()[0]));
  BOOST_TEST(std::isnan(with_nan.output.select(0, 0).select(0, 1).to_vector()[0]));
  BOOST_TEST(!std::isnan(with_nan.output.select(0, 0).select(0, 0).to_vector()[0]));
  BOOST_TEST(!std::isnan(max_difference(with_nan.output, reference.output)));  // NaN in the same places
}

BOOST_AUTO_TEST_CASE(bad_shapes_and_dtypes_name_the_op) {
  const Variable q(Tensor::ones({2, 3, 4})), k(Tensor::ones({2, 5, 4})), v(Tensor::ones({2, 5, 6}));
  expect_error<ShapeError>(
      [&] {
        scaled_dot_product_attention(q, Variable(Tensor::ones({2, 5, 3})), v);
      },
      "scaled_dot_product_attention: expects queries (B, …, n_q, d), keys (B, …, n_k, d), "
      "values (B, …, n_k, d_v), got [2,3,4], [2,5,3], [2,5,6]");
  expect_error<DTypeError>(
      [&] {
        scaled_dot_product_attention(q, k, Variable(Tensor::ones({2, 5, 6}, DType::Float64)));
      },
      "scaled_dot_product_attention: expects three float32 or three float64 tensors, got float32, float32, "
      "float64; convert with .to(DType::Float32)");
}

BOOST_AUTO_TEST_CASE(a_model_with_either_kernel_trains_the_same) {
  // Two encoders from one seed, one switched to the composed kernel, dropout on: the same losses for three
  // steps of gradient descent (the dropout masks come from the same seeds in the same order).
  std::vector<std::vector<double>> losses;
  for (AttentionKernel kernel : {AttentionKernel::Fused, AttentionKernel::Composed}) {
    Generator g(3);
    TransformerEncoder encoder(
        {.layer = {.num_hiddens = 8, .ffn_num_hiddens = 16, .num_heads = 2, .dropout = 0.2, .generator = &g},
         .num_layers = 2,
         .tokens = {.vocab_size = 50}});
    set_attention_kernel(encoder, kernel);
    const Tensor tokens = Tensor::from_vector<int64_t>({1, 5, 9, 2, 7, 3, 4, 4, 8, 11, 0, 0}, {2, 6});
    const AttentionMask mask{.valid_lens = Tensor::from_vector<int64_t>({6, 4}, {2})};
    std::vector<double> run;
    for (int step = 0; step < 3; ++step) {
      encoder.zero_grad();
      const Variable out = encoder(tokens, mask);
      const Variable loss = mean(out * out);
      loss.backward();
      run.push_back(loss.item());
      for (const Variable& p : encoder.parameters()) p.data().add_(mul(p.grad(), -0.1));
    }
    losses.push_back(run);
  }
  for (size_t step = 0; step < 3; ++step) BOOST_TEST(std::abs(losses[0][step] - losses[1][step]) < 1e-5);
  BOOST_TEST(losses[0][2] != losses[0][0]);  // the steps did change the model
}

BOOST_AUTO_TEST_SUITE_END()
