# The ordering example against the real coder provider (2.20 or newer; no mock):
# the provider accepts the rules, Coder can read them from the plan (every
# selector known at plan time), and they say what the example promises: Goose
# starts after the clone and stops before the teardown.

run "goose_starts_after_the_clone" {
  command = plan

  assert {
    condition = anytrue([for rule in data.coder_script_order.goose.rule : (
      rule.phase == "start" && contains(rule.run, "module.goose") && contains(rule.after, "coder_script.clone")
    )])
    error_message = "a start rule must make module.goose wait for coder_script.clone"
  }
  assert {
    condition     = coder_script.clone.run_on_start && !coder_script.clone.run_on_stop
    error_message = "the clone must be a start script, or the start rule orders nothing"
  }
}

run "goose_stops_before_the_teardown" {
  command = plan

  assert {
    condition = anytrue([for rule in data.coder_script_order.goose.rule : (
      rule.phase == "stop" && contains(rule.after, "module.goose") && contains(rule.run, "coder_script.teardown")
    )])
    error_message = "a stop rule must make coder_script.teardown wait for module.goose"
  }
  assert {
    condition     = coder_script.teardown.run_on_stop && !coder_script.teardown.run_on_start
    error_message = "the teardown must be a stop script, or the stop rule orders nothing"
  }
}

run "rules_that_name_a_module_set_their_phase" {
  command = plan

  # The module has a start and a stop script: a rule that names it without a
  # phase is one Coder must guess for (or rejects).
  assert {
    condition     = alltrue([for rule in data.coder_script_order.goose.rule : contains(["start", "stop"], coalesce(rule.phase, "none"))])
    error_message = "every rule that names module.goose must set phase"
  }
}
