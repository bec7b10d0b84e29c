#include "minigrad/nn/module.h"

#include <ostream>

namespace minigrad::nn {

template <typename Visit>
void Module::visit(const std::string& prefix, Visit&& visit_module) const {
  // Depth-first in registration order, with an explicit stack (a module tree is shallow, but there is
  // no reason to recurse when a stack is as clear).
  std::vector<std::pair<std::string, const Module*>> stack{{prefix, this}};
  while (!stack.empty()) {
    auto [path, module] = stack.back();
    stack.pop_back();
    visit_module(path, *module);
    const auto& kids = module->children_;
    for (auto it = kids.rbegin(); it != kids.rend(); ++it) {
      stack.emplace_back(path.empty() ? it->first : path + "." + it->first, it->second.get());
    }
  }
}

namespace {
std::string join(const std::string& path, const std::string& name) {
  return path.empty() ? name : path + "." + name;
}
}  // namespace

std::vector<std::pair<std::string, Variable>> Module::named_parameters() const {
  std::vector<std::pair<std::string, Variable>> out;
  visit("", [&](const std::string& path, const Module& m) {
    for (const auto& [name, p] : m.parameters_) out.emplace_back(join(path, name), p);
  });
  return out;
}

std::vector<Variable> Module::parameters() const {
  std::vector<Variable> out;
  for (auto& [name, p] : named_parameters()) out.push_back(p);
  return out;
}

std::vector<std::pair<std::string, Variable>> Module::named_buffers() const {
  std::vector<std::pair<std::string, Variable>> out;
  visit("", [&](const std::string& path, const Module& m) {
    for (const auto& [name, b] : m.buffers_) out.emplace_back(join(path, name), b);
  });
  return out;
}

std::vector<std::pair<std::string, const Module*>> Module::named_modules() const {
  std::vector<std::pair<std::string, const Module*>> out;
  visit("", [&](const std::string& path, const Module& m) { out.emplace_back(path, &m); });
  return out;
}

void Module::train(bool on) {
  training_ = on;
  for (auto& [name, child] : children_) child->train(on);
}

void Module::zero_grad(bool set_to_none) {
  for (const Variable& p : parameters()) p.zero_grad(set_to_none);
}

int64_t Module::parameter_count() const {
  int64_t n = 0;
  for (const Variable& p : parameters()) n += p.numel();
  return n;
}

void Module::to(DType dtype) {
  for (auto& [name, p] : named_parameters()) p.set_data(p.data().to(dtype));
  for (auto& [name, b] : named_buffers()) {
    if (is_floating(b.dtype())) b.set_data(b.data().to(dtype));
  }
  // Iteratively over the module tree, each module once.
  std::vector<Module*> stack{this};
  while (!stack.empty()) {
    Module* m = stack.back();
    stack.pop_back();
    m->after_conversion(dtype);
    for (const auto& [name, child] : m->children_) stack.push_back(child.get());
  }
}

void Module::check_new_name(const std::string& name) const {
  if (name.empty() || name.find('.') != std::string::npos) {
    throw ValueError("register", "name '" + name + "' must be non-empty and contain no '.'");
  }
  auto taken = [&](const auto& list) {
    for (const auto& entry : list) {
      if (entry.first == name) return true;
    }
    return false;
  };
  if (taken(parameters_) || taken(buffers_) || taken(children_)) {
    throw ValueError("register", "'" + name + "' is already registered in " + this->name());
  }
}

Variable Module::register_parameter(std::string name, Tensor value) {
  check_new_name(name);
  Variable p(std::move(value), /*requires_grad=*/true);
  p.set_name(name);
  parameters_.emplace_back(std::move(name), p);
  return p;
}

Variable Module::register_buffer(std::string name, Tensor value) {
  check_new_name(name);
  Variable b(std::move(value));
  b.set_name(name);
  buffers_.emplace_back(std::move(name), b);
  return b;
}

void Module::add_child(std::string name, std::shared_ptr<Module> module) {
  check_new_name(name);
  if (!module) throw ValueError("register_module", "module '" + name + "' is null");
  children_.emplace_back(std::move(name), std::move(module));
}

std::string Module::repr() const {
  // Name(extra) for a leaf module; otherwise Name(\n  (child): ...\n) with children indented by two.
  std::string out = name() + "(";
  const std::string extra = extra_repr();
  if (children_.empty()) return out + extra + ")";
  if (!extra.empty()) out += "\n  " + extra;
  for (const auto& [child_name, child] : children_) {
    std::string child_repr = child->repr();
    // Indent the child's continuation lines under this module.
    for (size_t at = child_repr.find('\n'); at != std::string::npos; at = child_repr.find('\n', at + 1)) {
      child_repr.insert(at + 1, "  ");
    }
    out += "\n  (" + child_name + "): " + child_repr;
  }
  return out + "\n)";
}

std::ostream& operator<<(std::ostream& os, const Module& module) {
  return os << module.repr();
}

std::vector<Variable> parameters_of(std::initializer_list<const Module*> modules) {
  std::vector<Variable> all;
  for (const Module* m : modules) {
    if (m == nullptr) throw ValueError("parameters_of", "a module is null");
    for (const Variable& p : m->parameters()) all.push_back(p);
  }
  return all;
}

std::vector<std::pair<std::string, Variable>> named_parameters_of(
    std::initializer_list<std::pair<std::string, const Module*>> modules) {
  std::vector<std::pair<std::string, Variable>> all;
  for (const auto& [prefix, m] : modules) {
    if (m == nullptr) throw ValueError("named_parameters_of", "module '" + prefix + "' is null");
    for (const auto& [name, p] : m->named_parameters()) {
      all.emplace_back(prefix.empty() ? name : prefix + "." + name, p);
    }
  }
  return all;
}

namespace {

// A hook's id appears in one of the two lists.
void erase_module_hook(void* list, uint64_t id) {
  auto& hooks = *static_cast<detail::ModuleHooks*>(list);
  std::erase_if(hooks.forward, [id](const auto& hook) { return hook.first == id; });
  std::erase_if(hooks.backward, [id](const auto& hook) { return hook.first == id; });
}

// The module's hook lists, made on the first hook.
detail::ModuleHooks& hook_lists(std::shared_ptr<detail::ModuleHooks>& hooks, const Module* module) {
  if (!hooks) {
    hooks = std::make_shared<detail::ModuleHooks>();
    hooks->module = module;
  }
  return *hooks;
}

}  // namespace

Module::~Module() {
  if (hooks_) hooks_->module = nullptr;  // a backward pass still to come finds its module gone
}

HookHandle Module::register_forward_hook(ForwardHook hook) {
  if (!hook) throw ValueError(name() + ".register_forward_hook", "the hook is empty");
  detail::ModuleHooks& lists = hook_lists(hooks_, this);
  lists.forward.emplace_back(lists.next_id, std::move(hook));
  return HookHandle(hooks_, lists.next_id++, erase_module_hook);
}

HookHandle Module::register_full_backward_hook(FullBackwardHook hook) {
  if (!hook) throw ValueError(name() + ".register_full_backward_hook", "the hook is empty");
  detail::ModuleHooks& lists = hook_lists(hooks_, this);
  lists.backward.emplace_back(lists.next_id, std::move(hook));
  return HookHandle(hooks_, lists.next_id++, erase_module_hook);
}

}  // namespace minigrad::nn
