-- Approval dialogs from the real server (warden.exec under the untrusted
-- policy), answered through a stubbed vim.ui.select with each choice, and
-- the effect checked on disk and in the server's answer.
local H = require('helpers')

H.run('approval dialog: every choice and its effect', function()
  local ws = H.workspace({ ['main.txt'] = 'hello' })
  H.setup({ config = { settings = { approvalPolicy = 'untrusted' } } })
  H.open(ws .. '/main.txt')

  local messages = {}
  vim.lsp.handlers['window/showMessage'] = function(_, r)
    table.insert(messages, r.message)
  end

  -- Runs `touch name` through warden.exec, answering the dialog (if one
  -- comes) with the action titled `choice` (nil cancels the picker).
  -- Returns the dialogs shown and the server's closing message.
  local function run(name, choice)
    local shown = {}
    vim.ui.select = function(items, opts, on_choice)
      local titles = vim.tbl_map(opts.format_item, items)
      table.insert(shown, { titles = titles, opts = opts, status = require('warden').status() })
      for i, it in ipairs(items) do
        if choice and titles[i] == choice then
          return on_choice(it, i)
        end
      end
      H.truthy(choice == nil, ('choice %q offered among %s'):format(tostring(choice), vim.inspect(titles)))
      on_choice(nil, nil)
    end
    local n = #messages
    local _, err = H.execute('warden.exec', { { command = { 'touch', name }, cwd = ws } })
    H.eq(nil, err, 'warden.exec error')
    local outcome
    H.wait(20000, function()
      for i = n + 1, #messages do
        local m = messages[i]
        if m:find('touch ' .. name, 1, true) and (m:find('did not run', 1, true) or m:find('exited', 1, true)) then
          outcome = m
          return true
        end
      end
    end, 'warden.exec to finish for ' .. name)
    return shown, outcome
  end

  -- Allow once: it runs, and the dialog said what and how risky.
  local shown, msg = run('once.txt', 'Allow once')
  H.eq(1, #shown, 'one dialog')
  H.eq('Allow once', shown[1].titles[1], 'Allow once comes first')
  H.eq({ 'Deny', 'Deny and stop' }, vim.list_slice(shown[1].titles, #shown[1].titles - 1), 'denials come last')
  H.eq('warden.approval', shown[1].opts.kind, 'vim.ui.select kind')
  H.contains(shown[1].opts.prompt, 'touch once.txt', 'the prompt names the command')
  H.contains(shown[1].status, 'warden: Running a command', 'statusline shows the job while it waits')
  local last = require('warden.approval').last
  local view = table.concat(last.view.lines, '\n')
  H.contains(view, 'in ' .. ws, 'the float names the directory')
  H.contains(view, 'Sandbox:', 'the float says how it runs')
  H.contains(view, 'Risk: ', 'the float shows the risk')
  H.truthy(last.view.level, 'a risk level was recognised')
  H.truthy(#vim.tbl_filter(function(h)
    return h[1] == 'WardenRisk' .. last.view.level:sub(1, 1):upper() .. last.view.level:sub(2)
  end, last.view.highlights) >= 1, 'the level is highlighted')
  H.eq(true, H.exists(ws .. '/once.txt'), 'allowed once: it ran')
  H.contains(msg, 'exited 0', 'the server reports the run')

  -- The same through the user command, :Warden run, which shows the
  -- command's output and exit status in the warden://output buffer.
  vim.ui.select = function(items, opts, on_choice)
    on_choice(items[1], 1) -- Allow once
  end
  vim.fn.writefile({ 'echo first output line', 'echo second output line >&2', 'touch by-command.txt', 'exit 3' }, ws .. '/say.sh')
  local n = #messages
  vim.cmd('Warden run sh say.sh')
  H.wait(20000, function()
    return #messages > n and messages[#messages]:find('exited', 1, true) ~= nil
  end, ':Warden run to finish')
  H.eq(true, H.exists(ws .. '/by-command.txt'), ':Warden run ran the command in the workspace')
  local out_buf = require('warden.output').buf()
  local output
  H.wait(5000, function()
    output = table.concat(vim.api.nvim_buf_get_lines(out_buf, 0, -1, false), '\n')
    return output:find('exited 3', 1, true) ~= nil
  end, 'the exit status in warden://output')
  H.contains(output, '$ sh say.sh', 'the output buffer names the command')
  H.contains(output, 'first output line', 'stdout shown')
  H.contains(output, 'second output line', 'stderr shown')
  H.truthy(#vim.fn.win_findbuf(out_buf) > 0, 'the output buffer is shown in a window')

  -- Allow once is not remembered.
  shown = run('once.txt', 'Allow once')
  H.eq(1, #shown, 'asked again after Allow once')

  -- Deny, Deny and stop, and a cancelled picker: nothing runs.
  for _, case in ipairs({ { 'deny.txt', 'Deny' }, { 'stop.txt', 'Deny and stop' }, { 'cancel.txt', nil } }) do
    shown, msg = run(case[1], case[2])
    H.eq(1, #shown, 'a dialog for ' .. case[1])
    H.eq(false, H.exists(ws .. '/' .. case[1]), tostring(case[2]) .. ': did not run')
    H.contains(msg, 'did not run', tostring(case[2]) .. ': the server reports the refusal')
  end

  -- A high-risk command: the level is HIGH and highlighted as such, and
  -- "Always allow" and "Allow for session" are not offered.
  vim.fn.mkdir(ws .. '/build/obj', 'p')
  vim.fn.writefile({ 'x' }, ws .. '/build/obj/a.o')
  -- Repository data in the tree makes the deletion high risk (a small
  -- rm -rf inside the writable roots is medium).
  vim.fn.mkdir(ws .. '/build/dep/.git', 'p')
  vim.fn.writefile({ 'ref: refs/heads/main' }, ws .. '/build/dep/.git/HEAD')
  vim.ui.select = function(items, opts, on_choice)
    shown = vim.tbl_map(opts.format_item, items)
    for i, item in ipairs(items) do
      if opts.format_item(item) == 'Deny' then
        return on_choice(item, i)
      end
    end
    on_choice(nil, nil)
  end
  local n = #messages
  H.execute('warden.exec', { { command = { 'rm', '-rf', 'build' }, cwd = ws } })
  H.wait(20000, function()
    return #messages > n and messages[#messages]:find('did not run', 1, true) ~= nil
  end, 'rm -rf to be denied')
  last = require('warden.approval').last
  H.eq('high', last.view.level, 'rm -rf is high risk')
  H.eq('Warden asks — HIGH risk', last.view.lines[1], 'the float title names the level')
  H.truthy(vim.tbl_contains(vim.tbl_map(function(h)
    return h[1]
  end, last.view.highlights), 'WardenRiskHigh'), 'highlighted as high')
  H.eq({ 'Deny', 'Allow once', 'Deny and stop' }, shown, 'high risk: Deny first, no standing approval offered')
  H.eq(true, H.exists(ws .. '/build/obj/a.o'), 'denied: nothing deleted')

  -- A picker that answers later (Telescope and friends). 0.10+ runs the
  -- handler in a coroutine: it waits for the pick, nothing runs meanwhile,
  -- and the pick decides. 0.7 must answer before it returns to its loop:
  -- inputlist() asks instead, and the late pick is ignored.
  local late
  vim.ui.select = function(items, opts, on_choice)
    late = function(title)
      for i, it in ipairs(items) do
        if opts.format_item(it) == title then
          return on_choice(it, i)
        end
      end
      error('no choice ' .. title)
    end
  end
  if H.yields then
    n = #messages
    H.execute('warden.exec', { { command = { 'touch', 'late.txt' }, cwd = ws } })
    H.wait(5000, function()
      return late ~= nil
    end, 'the picker to be shown')
    vim.wait(500)
    H.eq(n, #messages, 'no outcome while the picker is open')
    H.eq(false, H.exists(ws .. '/late.txt'), 'nothing ran while the picker was open')
    H.contains(require('warden').status(), 'warden: Running a command', 'the job waits for the answer')
    late('Allow once')
    H.wait(20000, function()
      return #messages > n and messages[#messages]:find('exited 0', 1, true) ~= nil
    end, 'touch late.txt to run after the late pick')
    H.eq(true, H.exists(ws .. '/late.txt'), 'the late pick (Allow once) decided')
  else
    local inputlist = vim.fn.inputlist
    local listed
    vim.fn.inputlist = function(lines)
      listed = lines
      for i, l in ipairs(lines) do
        if l:match('%. Deny$') then
          return i - 1
        end
      end
    end
    n = #messages
    H.execute('warden.exec', { { command = { 'touch', 'late.txt' }, cwd = ws } })
    H.wait(20000, function()
      return #messages > n and messages[#messages]:find('did not run', 1, true) ~= nil
    end, 'touch late.txt to be denied')
    vim.fn.inputlist = inputlist
    H.truthy(listed and listed[1]:find('Esc denies', 1, true), 'inputlist was used: ' .. vim.inspect(listed))
    H.eq(false, H.exists(ws .. '/late.txt'), 'the inputlist answer (Deny) stood')
    late('Allow once')
    H.eq(false, H.exists(ws .. '/late.txt'), 'the late pick changed nothing')
  end

  -- Allow for session: runs, and the same command is not asked again.
  shown = run('session.txt', 'Allow for session')
  H.eq(true, H.exists(ws .. '/session.txt'), 'allowed for session: it ran')
  vim.fn.delete(ws .. '/session.txt')
  shown, msg = run('session.txt', nil)
  H.eq(0, #shown, 'not asked again in this session')
  H.eq(true, H.exists(ws .. '/session.txt'), 'ran again without asking')

  -- Always allow: the offered prefix is saved as a rule, and the command
  -- runs again (in a later session too) without a dialog.
  shown = run('always.txt', 'Always allow `touch always.txt`')
  H.eq(true, H.exists(ws .. '/always.txt'), 'always allowed: it ran')
  local rules = vim.env.XDG_CONFIG_HOME .. '/warden/rules/default.rules'
  H.contains(table.concat(H.read(rules), '\n'), 'prefix_rule(pattern=["touch", "always.txt"], decision="allow")', 'the rule was saved')
  vim.fn.delete(ws .. '/always.txt')
  shown = run('always.txt', nil)
  H.eq(0, #shown, 'the rule allows it without asking')
  H.eq(true, H.exists(ws .. '/always.txt'), 'ran under the saved rule')
end)
