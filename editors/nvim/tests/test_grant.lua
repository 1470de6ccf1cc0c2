-- Grants (additional permissions) through the editor, as a user answers
-- them: the agent's shell tool asks for write access to a directory outside
-- the workspace, the dialog names exactly that grant, and the answer decides
-- what lands on disk and what the model is told; after a sandbox denial the
-- retry dialog offers the narrowest grant. The real warden binary runs every
-- command in its real sandbox; only the model is scripted (fake_model.lua).
local H = require('helpers')

local uv = vim.uv or vim.loop

-- The tool results the model received in a request, oldest first.
local function tool_results(req)
  local out = {}
  for _, m in ipairs(req.messages) do
    if m.role == 'tool' then
      table.insert(out, m.content)
    end
  end
  return out
end

local function shell(argv, grant)
  local args = { command = argv }
  if grant then
    args.sandbox_permissions = 'with_additional_permissions'
    args.additional_permissions = grant
  end
  return { calls = { { name = 'shell', args = vim.json.encode(args) } } }
end

-- Stubs the picker: answers dialog i with the action titled choices[i] (or
-- choices itself, a string, for every dialog) and records what was shown
-- (titles, prompt, the float's text). The plugin turns an error in the
-- picker into a denial, so a failed check here ends the test at once.
local function answer_with(choices, shown)
  local function pick(items, opts)
    local choice = type(choices) == 'table' and choices[#shown + 1] or choices
    local titles = vim.tbl_map(opts.format_item, items)
    local approval = require('warden.approval')
    local last = approval.last
    -- The float shows every line of the message, wrapped, none cut off.
    H.truthy(last.win and vim.api.nvim_win_is_valid(last.win), 'the float is open while the picker asks')
    local width = vim.api.nvim_win_get_width(last.win)
    H.eq(approval.rows(last.view.lines, width), vim.api.nvim_win_get_height(last.win),
      ('rows of the float (%d lines, %d wide)'):format(#last.view.lines, width))
    table.insert(shown, {
      titles = titles,
      prompt = opts.prompt,
      message = last.params.message,
      view = table.concat(last.view.lines, '\n'),
    })
    for i, it in ipairs(items) do
      if titles[i] == choice then
        return it, i
      end
    end
    error(('no action %q among %s'):format(choice, vim.inspect(titles)))
  end
  vim.ui.select = function(items, opts, on_choice)
    local ok, item, idx = xpcall(pick, debug.traceback, items, opts)
    if not ok then
      H.log('FAIL in the picker: ' .. tostring(item))
      vim.cmd('cquit 1')
    end
    on_choice(item, idx)
  end
end

local function grant_flows(outside)
  -- The workspace-write sandbox lets commands write the workspace and the
  -- temporary directories; outside (under /var/tmp) is beyond all of them.
  local granted, plain, denied = outside .. '/granted.txt', outside .. '/plain.txt', outside .. '/denied.txt'
  local model = require('fake_model').start({
    -- (1) asks for write access to outside: Allow once.
    shell({ 'touch', granted }, { write = { outside } }),
    -- then the same kind of write without a grant: the sandbox refuses it.
    shell({ 'touch', plain }),
    { text = 'Granted write done.' },
    -- (3) asks for the grant again: Deny.
    shell({ 'touch', denied }, { write = { outside } }),
    { text = 'Understood, not writing.' },
  })
  local ws = H.workspace({ ['main.txt'] = 'hello' })
  H.setup({
    env = { OPENAI_BASE_URL = model.url, OPENAI_API_KEY = 'test-key', WARDEN_MODEL = 'fake-model' },
    config = { settings = { approvalPolicy = 'on-request' } },
  })
  -- A credential in the server's (temporary) home, which the sandbox hides.
  local home = vim.env.HOME
  vim.fn.mkdir(home .. '/.ssh', 'p')
  vim.fn.writefile({ 'SECRET-deploy' }, home .. '/.ssh/id_deploy')
  H.open(ws .. '/main.txt')
  -- A screen the whole dialog fits on, as a user's would.
  vim.o.columns, vim.o.lines = 160, 60
  local messages = {}
  vim.lsp.handlers['window/showMessage'] = function(_, r)
    table.insert(messages, r.message)
  end
  local function wait_message(text, what)
    if not vim.wait(30000, function()
      return vim.tbl_contains(messages, text)
    end, 20) then
      error(('timed out waiting for %s (messages: %s)'):format(what, vim.inspect(messages)), 2)
    end
  end

  -- (1) The agent asks for a grant; the user allows it once.
  local shown = {}
  answer_with({ 'Allow once', 'Allow once' }, shown)
  vim.cmd('Warden ask write a file outside the workspace')
  wait_message('Warden: agent: Granted write done.', 'the first agent run')
  H.eq(2, #shown, 'two dialogs: the grant, then the plain write outside')
  local d = shown[1]
  H.contains(d.prompt, 'touch ' .. granted, 'the prompt names the command')
  H.contains(d.prompt, 'in the sandbox with write access to ' .. outside, 'the prompt names the grant')
  H.contains(d.view, 'grants write access to ' .. outside, 'the float shows the grant among the facts')
  -- No "Always allow": its prefix would name a one-off path under /var/tmp.
  H.eq({ 'Allow once', 'Allow for session', 'Deny', 'Deny and stop' },
    d.titles, 'the actions, in the server\'s order')
  H.eq(true, H.exists(granted), 'allowed once: the file landed outside the workspace')
  -- The plain write is asked about (high risk) and allowed, but runs in the
  -- sandbox with no grant: Allow once left nothing behind.
  H.eq('Warden: run `touch ' .. plain .. '`?', shown[2].prompt, 'the plain write asks with no grant')
  H.eq({ 'Deny', 'Allow once', 'Deny and stop' }, shown[2].titles, 'high risk: Deny first')
  H.eq(false, H.exists(plain), 'without a grant the sandbox refused the write')
  local results = tool_results(model.requests[3])
  H.eq(2, #results, 'two tool results')
  H.contains(results[1], 'Exit code: 0', 'the model is told the granted run succeeded')
  H.contains(results[1], 'Sandboxed: yes, with additional write access to ' .. outside, 'the model is told the grant it got')
  H.truthy(not results[2]:find('Exit code: 0', 1, true), 'the ungranted write failed: ' .. results[2])
  H.contains(results[2], 'Sandboxed: yes\n', 'the ungranted write ran in the plain sandbox')

  -- (3) The same grant asked again (Allow once remembers nothing): Deny.
  shown = {}
  answer_with('Deny', shown)
  vim.cmd('Warden ask try the write again')
  wait_message('Warden: agent: Understood, not writing.', 'the second agent run')
  H.eq(1, #shown, 'asked again after Allow once')
  H.contains(shown[1].prompt, 'write access to ' .. outside, 'the denied dialog named the grant')
  H.eq(false, H.exists(denied), 'denied: nothing written')
  results = tool_results(model.requests[5])
  H.contains(results[#results], 'The user denied this command', 'the model is told it was denied')

  -- (2) Retry with a grant: under on-failure a command runs sandboxed
  -- without asking; its write outside fails, and the retry dialog offers
  -- exactly the blocked directory.
  local notify, said = vim.notify, nil
  vim.notify = function(msg)
    said = msg
  end
  vim.cmd('Warden policy on-failure')
  H.wait(10000, function()
    return said ~= nil
  end, ':Warden policy to answer')
  vim.notify = notify
  H.eq('Warden: approval policy is now on-failure', said, 'the policy changed')
  vim.fn.writefile({ '#!/bin/sh', 'echo building', 'touch ' .. outside .. '/built.txt' }, ws .. '/build.sh')
  vim.fn.setfperm(ws .. '/build.sh', 'rwxr-xr-x')
  shown = {}
  answer_with('Allow once', shown)
  local n = #messages
  vim.cmd('Warden run ./build.sh')
  local outcome
  H.wait(30000, function()
    for i = n + 1, #messages do
      if messages[i]:find('exited', 1, true) or messages[i]:find('did not run', 1, true) then
        outcome = messages[i]
        return true
      end
    end
  end, 'the retried build to finish')
  H.eq(1, #shown, 'one retry dialog')
  H.contains(shown[1].prompt, 'Retry it in the sandbox with write access to ' .. outside, 'the retry offers the blocked directory')
  H.eq({ 'Allow once', 'Allow for session', 'Run without sandbox', 'Deny', 'Deny and stop' }, shown[1].titles,
    'the retry actions, in the server\'s order')
  H.eq(true, H.exists(outside .. '/built.txt'), 'retried with the grant: the write landed')
  H.contains(outcome, 'exited 0 (sandboxed) with write access to ' .. outside, 'the outcome says how it ran')
  local out_buf = require('warden.output').buf()
  local output
  H.wait(5000, function()
    output = table.concat(vim.api.nvim_buf_get_lines(out_buf, 0, -1, false), '\n')
    return output:find('exited 0', 1, true) ~= nil
  end, 'the outcome in warden://output')
  H.contains(output, 'building', 'the retried run\'s output is shown')

  -- A high-risk retry (a read of a credential the sandbox hides): Deny
  -- comes first, running without the sandbox is a separate later action.
  vim.fn.writefile({ '#!/bin/sh', 'cat ' .. home .. '/.ssh/id_deploy' }, ws .. '/show.sh')
  vim.fn.setfperm(ws .. '/show.sh', 'rwxr-xr-x')
  shown = {}
  answer_with('Deny', shown)
  n = #messages
  vim.cmd('Warden run ./show.sh')
  H.wait(30000, function()
    for i = n + 1, #messages do
      if messages[i]:find('show.sh', 1, true) then
        outcome = messages[i]
        return true
      end
    end
  end, 'the denied retry to finish')
  H.eq(1, #shown, 'one retry dialog for the read')
  H.contains(shown[1].prompt, 'Retry it in the sandbox with read access to ~/.ssh/id_deploy', 'the retry offers exactly the file')
  H.eq({ 'Deny', 'Allow once', 'Run without sandbox', 'Deny and stop' }, shown[1].titles, 'high risk: Deny first')
  H.eq('high', require('warden.approval').last.view.level, 'the read of a key is high risk')
  H.contains(outcome, 'the sandbox blocked `./show.sh`', 'the outcome says the sandbox blocked it')
  output = table.concat(vim.api.nvim_buf_get_lines(out_buf, 0, -1, false), '\n')
  H.contains(output, 'id_deploy: Permission denied', 'the blocked run\'s output is shown')
  H.truthy(not output:find('SECRET-deploy', 1, true), 'denied: the secret was not shown')
  model.stop()
end

H.run('grants: requested, retried and denied through the dialog', function()
  -- Outside every writable root of the sandbox (which include /tmp).
  local outside = uv.fs_mkdtemp('/var/tmp/warden-nvim-grant-XXXXXX')
  H.truthy(outside, 'a directory under /var/tmp')
  -- Removed however the test ends (:cquit included).
  vim.api.nvim_create_autocmd('VimLeavePre', {
    callback = function()
      vim.fn.delete(outside, 'rf')
    end,
  })
  grant_flows(outside)
end)
