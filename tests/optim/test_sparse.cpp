// Optimizers and clipping on row-sparse gradients (an embedding with sparse = true): SparseAdam against
// PyTorch 1.13's, and against Adam where they are meant to differ; SGD sparse and dense giving the same
// weights; clip_grad_norm_ against the dense computation; the refusals; resuming SparseAdam bit for bit.
#include "test_helpers.h"

using namespace minigrad;
using namespace minigrad::testing;

namespace {

constexpr DType F64 = DType::Float64;

// The row-sparse gradient of a (4, 2) table with rows `rows` set to `values` (K·2 numbers).
Tensor rows_of(std::vector<int64_t> rows, std::vector<double> values) {
  const auto k = static_cast<int64_t>(rows.size());
  return coalesce_rows(ids_of(rows), Tensor::from_values(std::span<const double>(values), {k, 2}, F64),
                       {4, 2});
}

Variable table_4x2() {
  return Variable(Tensor::from_values({1.0, -2.0, 0.5, 0.25, -1.5, 3.0, 2.0, -0.75}, {4, 2}, F64), true);
}

// Three steps that touch rows {0, 2}, then {2, 3}, then {0, 1, 2}; the table after each.
std::vector<std::vector<double>> three_sparse_steps(const Variable& table, optim::Optimizer& optimizer) {
  const std::vector<Tensor> grads = {rows_of({0, 2}, {0.1, -0.2, 0.3, 0.4}),
                                     rows_of({2, 3}, {-0.5, 0.1, 0.2, 0.05}),
                                     rows_of({0, 1, 2}, {0.3, 0.3, -0.1, 0.6, 0.2, -0.4})};
  std::vector<std::vector<double>> out;
  for (const Tensor& g : grads) {
    optimizer.zero_grad();
    table.set_grad(g);
    optimizer.step();
    out.push_back(table.data().to_vector());
  }
  return out;
}

void expect_steps(const std::vector<std::vector<double>>& got,
                  const std::vector<std::vector<double>>& pytorch) {
  for (size_t s = 0; s < pytorch.size(); ++s) {
    for (size_t i = 0; i < pytorch[s].size(); ++i) {
      BOOST_TEST(std::abs(got[s][i] - pytorch[s][i]) < 1e-14, "step " << s + 1 << " element " << i << ": "
                                                                      << got[s][i] << " vs PyTorch "
                                                                      << pytorch[s][i]);
    }
  }
}

// A small model over a table: the mean of the looked-up rows, through a fixed projection, squared.
Variable toy_loss(const nn::Embedding& table, const Tensor& ids, const Tensor& projection) {
  return mean(pow(matmul(table(ids), Variable(projection)) - 0.5, 2));
}

}  // namespace

BOOST_AUTO_TEST_SUITE(sparse_optimizers)

BOOST_AUTO_TEST_CASE(sparse_adam_matches_pytorch) {
  // torch.optim.SparseAdam on the same table and sparse gradients, in float64. Rows 1 and 3 stay put in
  // the steps that do not touch them; row 1, first touched at step 3, is bias-corrected with t = 3.
  Variable table = table_4x2();
  optim::SparseAdam adam({table}, {.lr = 0.01});
  expect_steps(three_sparse_steps(table, adam),
               {{0.9900000316226766, -1.9900000158113633, 0.5, 0.25, -1.5099999894590856, 2.990000007905688,
                 2.0, -0.75},
                {0.9900000316226766, -1.9900000158113633, 0.5, 0.25, -1.5070643790036846, 2.98169403894232,
                 1.9925586435301479, -0.7574413211726224},
                {0.9821212322515387, -1.9921264412875406, 0.5063881157929893, 0.24361186737285637,
                 -1.5069917974970894, 2.9815382767216874, 1.9925586435301479, -0.7574413211726224}});
  const auto state = adam.state_tensors();
  BOOST_REQUIRE(state.size() == 3u);
  for (const auto& [name, t] : state) {
    if (name == "param0.step") BOOST_TEST(t.item() == 3);  // one count for the table, not one per row
    if (name == "param0.exp_avg")
      expect_close(t, {0.039, 0.012, -0.01, 0.06, -0.0007, 0.0014, 0.02, 0.005}, 1e-15);
  }

  Variable other = table_4x2();
  optim::SparseAdam tuned({other}, {.lr = 0.01, .betas = {0.8, 0.99}, .eps = 1e-6});
  expect_steps(three_sparse_steps(other, tuned),
               {{0.99000099990001, -1.9900004999750012, 0.5, 0.25, -1.5099996666777775, 2.9900002499937504,
                 2.0, -0.75},
                {0.99000099990001, -1.9900004999750012, 0.5, 0.25, -1.506500569304226, 2.9819793759405444,
                 1.9921633162899266, -0.7578355084425703},
                {0.9815095310300491, -1.992747187031194, 0.507062399525047, 0.24293701195146808,
                 -1.506408385885157, 2.9827702054818266, 1.9921633162899266, -0.7578355084425703}});
}

BOOST_AUTO_TEST_CASE(sparse_adam_keeps_absent_rows_where_adam_moves_them) {
  // One table, two copies: Adam on a dense gradient, SparseAdam on the row-sparse one. Step 1 touches rows
  // {0, 2}, step 2 only row 2.
  nn::Embedding dense_table({.num_embeddings = 4, .embedding_dim = 2}),
      sparse_table({.num_embeddings = 4, .embedding_dim = 2, .sparse = true});
  dense_table.to(F64);
  sparse_table.to(F64);
  sparse_table.weight.data().copy_(dense_table.weight.data());
  optim::Adam adam(dense_table.named_parameters(), {.lr = 0.01});
  optim::SparseAdam sparse_adam(sparse_table.named_parameters(), {.lr = 0.01});
  auto step = [&](const Tensor& ids) {
    for (auto [table, optimizer] :
         {std::pair<nn::Embedding*, optim::Optimizer*>{&dense_table, &adam},
          std::pair<nn::Embedding*, optim::Optimizer*>{&sparse_table, &sparse_adam}}) {
      optimizer->zero_grad();
      sum(pow((*table)(ids), 2)).backward();
      optimizer->step();
    }
  };
  auto row = [](const Variable& w, int64_t r) { return w.data().select(0, r).to_vector<double>(); };
  auto state = [](const optim::Optimizer& o, const std::string& key) {
    for (const auto& [name, t] : o.state_tensors()) {
      if (name == "weight." + key) return t.clone();
    }
    return Tensor();
  };

  step(ids_of({0, 2}));
  // The first step differs only in where eps enters: within 1e-6 of each other; row 1 untouched by both.
  for (int64_t r : {0, 2}) {
    for (size_t j = 0; j < 2; ++j)
      BOOST_TEST(std::abs(row(dense_table.weight, r)[j] - row(sparse_table.weight, r)[j]) < 1e-6);
  }
  BOOST_TEST(row(sparse_table.weight, 1) == row(dense_table.weight, 1));
  const std::vector<double> adam_row0 = row(dense_table.weight, 0), sparse_row0 = row(sparse_table.weight, 0);
  const Tensor adam_m = state(adam, "exp_avg"), sparse_m = state(sparse_adam, "exp_avg");
  const Tensor sparse_v = state(sparse_adam, "exp_avg_sq");

  step(ids_of({2}));
  // SparseAdam: row 0 was not in the gradient, so its weights and moments are exactly as they were.
  BOOST_TEST(row(sparse_table.weight, 0) == sparse_row0);
  BOOST_TEST(state(sparse_adam, "exp_avg").select(0, 0).to_vector<double>() ==
             sparse_m.select(0, 0).to_vector<double>());
  BOOST_TEST(state(sparse_adam, "exp_avg_sq").select(0, 0).to_vector<double>() ==
             sparse_v.select(0, 0).to_vector<double>());
  // Adam: row 0's gradient was zero, yet its first moment decayed by beta1 and its weights moved on.
  expect_close(state(adam, "exp_avg").select(0, 0), {0.9 * adam_m.at({0, 0}), 0.9 * adam_m.at({0, 1})},
               1e-17);
  BOOST_TEST(row(dense_table.weight, 0) != adam_row0);
}

BOOST_AUTO_TEST_CASE(sgd_sparse_and_dense_training_give_the_same_weights) {
  // float32, a padding row and repeated ids; weights compared bit for bit after every step.
  manual_seed(11);
  nn::Embedding dense_table({.num_embeddings = 40, .embedding_dim = 6, .padding_idx = 0}),
      sparse_table({.num_embeddings = 40, .embedding_dim = 6, .padding_idx = 0, .sparse = true});
  sparse_table.weight.data().copy_(dense_table.weight.data());
  const Tensor projection = Tensor::normal({6, 3}, 0, 1);
  optim::SGD dense_sgd(dense_table.parameters(), {.lr = 0.5});
  optim::SGD sparse_sgd(sparse_table.parameters(), {.lr = 0.5});
  const std::vector<float> initial = dense_table.weight.data().to_vector<float>();
  Generator gen(3);
  for (int step = 0; step < 5; ++step) {
    std::vector<int64_t> ids(24);
    for (int64_t& id : ids) id = static_cast<int64_t>(gen.next_below(12));  // rows 12..39 never seen
    const Tensor batch = Tensor::from_vector(ids, {4, 6});
    dense_sgd.zero_grad();
    sparse_sgd.zero_grad();
    toy_loss(dense_table, batch, projection).backward();
    toy_loss(sparse_table, batch, projection).backward();
    BOOST_REQUIRE(sparse_table.weight.grad().is_row_sparse());
    BOOST_TEST(sparse_table.weight.grad().row_indices().numel() <= 11);  // at most rows 1..11: 0 is padding
    dense_sgd.step();
    sparse_sgd.step();
    BOOST_TEST(sparse_table.weight.data().to_vector<float>() == dense_table.weight.data().to_vector<float>(),
               "step " << step);
  }
  BOOST_TEST(dense_table.weight.data().to_vector<float>() != initial);  // they did train
}

BOOST_AUTO_TEST_CASE(clip_grad_norm_over_sparse_gradients_equals_the_dense_computation) {
  // A sparse table and a dense bias, against the same gradients all dense.
  Variable table = table_4x2(), bias(Tensor::from_values({3, -4}, {2}, F64), true);
  Variable dense_table = table_4x2(), dense_bias(bias.data().clone(), true);
  const Tensor g = rows_of({1, 3}, {0.5, -1.5, 2.0, 1.0});
  table.set_grad(g);
  dense_table.set_grad(g.to_dense());
  bias.set_grad(Tensor::from_values({0.25, 0.5}, {2}, F64));
  dense_bias.set_grad(bias.grad().clone());

  const double norm = optim::clip_grad_norm_({table, bias}, 1.0);
  const double dense_norm = optim::clip_grad_norm_({dense_table, dense_bias}, 1.0);
  BOOST_TEST(std::abs(norm - std::sqrt(0.25 + 2.25 + 4 + 1 + 0.0625 + 0.25)) < 1e-15);
  BOOST_TEST(norm == dense_norm);
  BOOST_REQUIRE(table.grad().is_row_sparse());  // clipping keeps it row-sparse
  expect_equal(table.grad().row_indices(), {1, 3});
  expect_close(table.grad().to_dense(), dense_table.grad().to_vector(), 1e-16);
  expect_close(bias.grad(), dense_bias.grad().to_vector(), 1e-16);
  BOOST_TEST(std::abs(table.grad().row_values().at({0, 0}) - 0.5 / (norm + 1e-6)) < 1e-16);
}

BOOST_AUTO_TEST_CASE(optimizers_that_would_move_every_row_refuse_a_sparse_gradient) {
  Variable table = table_4x2(), other(Tensor::ones({2}, F64), true);
  const std::vector<double> before = table.data().to_vector();
  auto with_sparse_gradient = [&] {
    table.set_grad(rows_of({1}, {1, 1}));
    other.set_grad(Tensor::ones({2}, F64));
  };
  const std::vector<std::pair<std::string, Variable>> named = {{"bias", other}, {"embed.weight", table}};

  with_sparse_gradient();
  optim::Adam adam(named, {});
  optim::AdamW adamw(named, {});
  for (optim::Optimizer* optimizer : std::initializer_list<optim::Optimizer*>{&adam, &adamw}) {
    const std::string name = optimizer->name();
    expect_error<ValueError>(
        [&] { optimizer->step(); },
        name +
            ": parameter embed.weight has a row-sparse gradient (an embedding with sparse "
            "= true): " +
            name +
            " does not take one, since it moves every row; use "
            "SparseAdam for it");
  }
  for (const optim::SGDOptions& options :
       {optim::SGDOptions{.lr = 0.1, .momentum = 0.9}, optim::SGDOptions{.lr = 0.1, .weight_decay = 0.01}}) {
    optim::SGD sgd(named, options);
    expect_error<ValueError>(
        [&] { sgd.step(); },
        "SGD: parameter embed.weight has a row-sparse gradient (an embedding with sparse = "
        "true): SGD takes one only without momentum and weight decay, which would move "
        "every row (use SparseAdam, or SGD with momentum = 0 and weight_decay = 0)");
  }
  // Nothing moved: the dense parameter comes first, and a refused step refuses before any update.
  BOOST_TEST(table.data().to_vector() == before);
  expect_equal(other.data(), {1, 1});
  BOOST_TEST(table.grad().is_row_sparse());  // and the gradient is still row-sparse

  // SparseAdam refuses a dense gradient.
  optim::SparseAdam sparse_adam(std::vector<std::pair<std::string, Variable>>{{"embed.weight", table}}, {});
  table.set_grad(table.grad().to_dense());
  expect_error<ValueError>(
      [&] { sparse_adam.step(); },
      "SparseAdam: parameter embed.weight has a dense gradient; SparseAdam takes row-sparse "
      "ones only (an embedding with sparse = true): use Adam for it");
  BOOST_TEST(table.data().to_vector() == before);
  expect_error<ValueError>([&] { optim::SparseAdam({table}, {.eps = -1}); },
                           "SparseAdam: eps must be in [0.000000, inf], got -1.000000");
}

BOOST_AUTO_TEST_CASE(sparse_adam_resumes_bit_for_bit_from_its_state_tensors) {
  auto batch = [](int step) {
    return Tensor::from_vector<int64_t>({step % 7, (3 * step) % 11, 2, (step * step) % 13}, {2, 2});
  };
  const Tensor projection = Tensor::normal({5, 3}, 0, 1, DType::Float32);
  auto train = [&](nn::Embedding& table, optim::SparseAdam& optimizer, int from, int to) {
    for (int step = from; step < to; ++step) {
      optimizer.zero_grad();
      toy_loss(table, batch(step), projection).backward();
      optim::clip_grad_norm_(table.parameters(), 0.05);
      optimizer.step();
    }
  };
  const nn::EmbeddingOptions options{.num_embeddings = 13, .embedding_dim = 5, .sparse = true};
  manual_seed(4);
  nn::Embedding straight(options);
  optim::SparseAdam straight_opt(straight.named_parameters(), {.lr = 0.05});
  train(straight, straight_opt, 0, 9);

  manual_seed(4);
  nn::Embedding first(options);
  optim::SparseAdam first_opt(first.named_parameters(), {.lr = 0.05});
  train(first, first_opt, 0, 5);
  const auto saved = first_opt.state_tensors();

  manual_seed(99);  // other initial weights, overwritten below
  nn::Embedding second(options);
  second.weight.data().copy_(first.weight.data());
  optim::SparseAdam second_opt(second.named_parameters(), {.lr = 0.05});
  second_opt.load_state_tensors(saved);
  train(second, second_opt, 5, 9);
  BOOST_TEST(second.weight.data().to_vector<float>() == straight.weight.data().to_vector<float>());
  // ... and not trivially: the steps after the save moved the weights.
  BOOST_TEST(first.weight.data().to_vector<float>() != straight.weight.data().to_vector<float>());
}

BOOST_AUTO_TEST_CASE(a_table_and_a_model_on_two_optimizers_resume_bit_for_bit_from_one_file) {
  // A sparse table's SparseAdam beside a head's AdamW, saved in one training-state file: resumed into
  // fresh optimizers, training goes on exactly as without the interruption.
  const Tensor labels = Tensor::from_vector<int64_t>({0, 1}, {2});
  auto ids = [](int step) {
    return Tensor::from_vector<int64_t>({step % 9, (5 * step) % 17, 3, (step * step) % 19}, {2, 2});
  };
  struct Model {
    Model()
        : table(nn::EmbeddingOptions{.num_embeddings = 20, .embedding_dim = 4, .sparse = true}), head(4, 2) {}
    nn::Embedding table;
    nn::Linear head;
  };
  auto train = [&](Model& m, optim::SparseAdam& table_opt, optim::AdamW& head_opt, int from, int to) {
    for (int step = from; step < to; ++step) {
      table_opt.zero_grad();
      head_opt.zero_grad();
      cross_entropy(m.head(mean(m.table(ids(step)), {1})), labels).backward();
      table_opt.step();
      head_opt.step();
    }
  };
  auto weights = [](const Model& m) {
    return std::vector<std::vector<float>>{m.table.weight.data().to_vector<float>(),
                                           m.head.weight.data().to_vector<float>()};
  };
  manual_seed(5);
  Model straight;
  optim::SparseAdam straight_table(straight.table.named_parameters(), {.lr = 0.05});
  optim::AdamW straight_head(straight.head.named_parameters(), {.lr = 0.05});
  train(straight, straight_table, straight_head, 0, 8);

  manual_seed(5);
  Model first;
  optim::SparseAdam first_table(first.table.named_parameters(), {.lr = 0.05});
  optim::AdamW first_head(first.head.named_parameters(), {.lr = 0.05});
  train(first, first_table, first_head, 0, 5);
  const std::string bytes = optim::serialize_training_state(
      std::vector<const optim::Optimizer*>{&first_head, &first_table}, {.step = 5});
  const SafetensorsFile file = parse_safetensors(bytes, "two.safetensors");
  BOOST_TEST(file.metadata.at("optimizer") == "AdamW");
  BOOST_TEST(file.metadata.at("optimizer1") == "SparseAdam");
  BOOST_TEST((file.find("optimizer1.weight.exp_avg") != nullptr));

  manual_seed(77);
  Model second;
  second.table.weight.data().copy_(first.table.weight.data());
  second.head.weight.data().copy_(first.head.weight.data());
  second.head.bias.data().copy_(first.head.bias.data());
  optim::SparseAdam second_table(second.table.named_parameters(), {.lr = 0.05});
  optim::AdamW second_head(second.head.named_parameters(), {.lr = 0.05});
  const optim::TrainingState state = optim::load_training_state(
      file, "two.safetensors", std::vector<optim::Optimizer*>{&second_head, &second_table});
  BOOST_TEST(state.step == 5);
  train(second, second_table, second_head, 5, 8);
  BOOST_TEST(weights(second) == weights(straight));  // exactly
  BOOST_TEST(weights(first) != weights(straight));   // and the last steps did move them

  // Refusals: the optimizers in another order, one missing, one too many. A refusal changes nothing,
  // even when an optimizer before the one that does not fit had already taken its part.
  optim::SparseAdam fresh_table(second.table.named_parameters(), {.lr = 0.05});
  optim::AdamW fresh_head(second.head.named_parameters(), {.lr = 0.05});
  expect_error<Error>(
      [&] {
        optim::load_training_state(file, "two.safetensors",
                                   std::vector<optim::Optimizer*>{&fresh_table, &fresh_head});
      },
      "load_training_state: two.safetensors: holds the state of AdamW, not SparseAdam (optimizer 1 of 2)");
  expect_error<Error>(
      [&] { optim::load_training_state(file, "two.safetensors", fresh_head); },
      "load_training_state: two.safetensors: holds the state of more than 1 optimizer(s) (SparseAdam is one "
      "more)");
  optim::AdamW three(second.head.named_parameters(), {.lr = 0.05});
  expect_error<Error>(
      [&] {
        optim::load_training_state(file, "two.safetensors",
                                   std::vector<optim::Optimizer*>{&fresh_head, &fresh_table, &three});
      },
      "load_training_state: two.safetensors: no 'optimizer2' in the metadata");
  // The table's state renamed so that the second optimizer refuses it after the first has loaded.
  std::vector<std::pair<std::string, Tensor>> tensors;
  for (const auto& [name, t] : file.tensors)
    tensors.emplace_back(name == "optimizer1.weight.exp_avg" ? "optimizer1.other.exp_avg" : name, t);
  const SafetensorsFile bad =
      parse_safetensors(serialize_safetensors(tensors, file.metadata), "bad.safetensors");
  expect_error_containing<Error>(
      [&] {
        optim::load_training_state(bad, "bad.safetensors",
                                   std::vector<optim::Optimizer*>{&fresh_head, &fresh_table});
      },
      "bad.safetensors: 'other.exp_avg' is not part of the state of SparseAdam");
  BOOST_TEST(fresh_head.state_tensors().empty());
  BOOST_TEST(fresh_table.state_tensors().empty());
}

BOOST_AUTO_TEST_CASE(the_training_step_of_the_docs_learns_and_leaves_unseen_rows_alone) {
  // docs/models-and-training.md, "Sparse gradients for embedding tables", on a smaller table.
  manual_seed(21);
  nn::Embedding table({.num_embeddings = 1000, .embedding_dim = 8, .sparse = true});
  nn::Linear head(8, 2);
  optim::SparseAdam table_optimizer(table.named_parameters(), {.lr = 1e-2});
  optim::Adam optimizer(head.named_parameters(), {.lr = 1e-2});
  const Tensor ids = Tensor::from_vector<int64_t>({3, 14, 15, 92, 65, 35, 89, 79}, {2, 4});
  const Tensor labels = Tensor::from_vector<int64_t>({0, 1}, {2});
  const std::vector<float> row_0 = table.weight.data().select(0, 0).to_vector<float>();
  double first = 0, last = 0;
  for (int step = 0; step < 20; ++step) {
    Variable loss = cross_entropy(head(mean(table(ids), {1})), labels);
    table_optimizer.zero_grad();
    optimizer.zero_grad();
    loss.backward();
    BOOST_REQUIRE(table.weight.grad().is_row_sparse());
    BOOST_TEST(table.weight.grad().row_indices().numel() == 8);
    optim::clip_grad_norm_(nn::parameters_of({&table, &head}), 1.0);
    table_optimizer.step();
    optimizer.step();
    (step == 0 ? first : last) = loss.item();
  }
  BOOST_TEST(last < 0.5 * first);
  BOOST_TEST(table.weight.data().select(0, 0).to_vector<float>() == row_0);  // never looked up
}

BOOST_AUTO_TEST_SUITE_END()
