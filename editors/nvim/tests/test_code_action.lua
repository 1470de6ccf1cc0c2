-- Agent actions appear in vim.lsp.buf.code_action() and run the agent
-- (against a local fake of the model API), with progress in the statusline.
local H = require('helpers')

H.run('agent code actions listed and run', function()
  local patch = table.concat({
    '*** Begin Patch',
    '*** Update File: calc.lua',
    '@@',
    '-local function add(a, b)',
    '+local function sum(a, b)',
    '*** End Patch',
  }, '\n')
  local model = require('fake_model').start({
    { text = 'It adds two numbers.' },
    { calls = { { name = 'apply_patch', args = vim.json.encode({ input = patch }) } } },
    { text = 'Renamed.' },
    { text = 'Explained again.' },
    { text = 'Nothing to fix, really.' },
    { hold = true },
  })
  local ws = H.workspace({ ['calc.lua'] = 'local function add(a, b)\n  return a + b\nend' })
  H.setup({ env = { OPENAI_BASE_URL = model.url, OPENAI_API_KEY = 'test-key', WARDEN_MODEL = 'fake-model' } })
  local client, buf = H.open(ws .. '/calc.lua')

  local messages = {}
  vim.lsp.handlers['window/showMessage'] = function(_, r)
    table.insert(messages, r.message)
  end
  local statuses = {}
  vim.api.nvim_create_autocmd('User', {
    pattern = 'WardenProgress',
    callback = function()
      table.insert(statuses, require('warden').status())
    end,
  })

  -- The list, as vim.ui.select shows it; pick "Explain".
  local calls = H.stub_select(H.by_title('Warden: Explain'))
  vim.api.nvim_win_set_cursor(0, { 2, 0 })
  vim.lsp.buf.code_action()
  H.wait(5000, function()
    return #calls == 1
  end, 'the code action list')
  local titles = vim.tbl_map(function(it)
    return calls[1].opts.format_item(it)
  end, calls[1].items)
  for _, want in ipairs({ 'Warden: Explain', 'Warden: Write tests', 'Warden: Ask agent…' }) do
    H.truthy(vim.tbl_contains(titles, want), want .. ' listed among ' .. vim.inspect(titles))
  end

  H.wait(15000, function()
    return vim.tbl_contains(messages, 'Warden: agent: It adds two numbers.')
  end, 'the agent to answer (messages: ' .. vim.inspect(messages) .. ')')
  local sent = vim.json.encode(model.requests[1].messages)
  H.contains(sent, 'return a + b', 'the selection reached the model')
  -- The progress may reach the client after the answer: the server opens
  -- it with a request the client answers, while the answer is a plain
  -- notification (seen on a loaded machine with Neovim 0.7).
  H.wait(5000, function()
    return #vim.tbl_filter(function(s)
      return s:find('^warden: ') ~= nil
    end, statuses) > 0
  end, 'progress shown by status(): ' .. vim.inspect(statuses))
  H.wait(5000, function()
    return require('warden').status() == 'warden'
  end, 'status() to show no job after the run ended')

  -- "Ask agent…" has no instruction: the plugin asks with vim.ui.input.
  H.stub_select(H.by_title('Warden: Ask agent…'))
  local asked
  vim.ui.input = function(opts, on_confirm)
    asked = opts.prompt
    on_confirm('Rename add to sum')
  end
  vim.api.nvim_set_current_buf(buf)
  vim.lsp.buf.code_action()
  -- The agent answers with a patch: it is reviewed (accepted here), and the
  -- model is told what landed.
  local reviewed
  H.on_review(function(s)
    reviewed = table.concat(s:summary_lines(), '\n')
    vim.api.nvim_feedkeys('gA', 'tx', false)
  end)
  H.wait(15000, function()
    return vim.tbl_contains(messages, 'Warden: agent: Renamed.')
  end, 'the second agent run')
  H.truthy(asked, 'vim.ui.input was used')
  H.contains(vim.json.encode(model.requests[2].messages), 'Rename add to sum', 'the typed instruction reached the model')
  H.contains(reviewed or '', 'M  calc.lua', 'the agent\'s patch was reviewed')
  H.eq('local function sum(a, b)', H.read(ws .. '/calc.lua')[1], 'the accepted patch landed')
  H.contains(vim.json.encode(model.requests[3].messages), 'Success', 'the model learned the patch landed')

  -- Escape in the "Ask agent…" prompt (nil from vim.ui.input) sends nothing.
  local executed = {}
  local request = client.request
  client.request = function(method, params, ...)
    if method == 'workspace/executeCommand' then
      table.insert(executed, params.command)
    end
    return request(method, params, ...)
  end
  local prompted = false
  vim.ui.input = function(_, on_confirm)
    prompted = true
    on_confirm(nil)
  end
  H.stub_select(H.by_title('Warden: Ask agent…'))
  vim.api.nvim_set_current_buf(buf)
  vim.lsp.buf.code_action()
  H.wait(5000, function()
    return prompted
  end, 'the Ask agent prompt')
  vim.wait(300)
  client.request = request
  H.eq({}, executed, 'commands sent after Escape')
  H.eq(3, #model.requests, 'model requests after Escape')

  -- :Warden explain runs the server's Explain action; :WardenAsk prompts.
  vim.api.nvim_set_current_buf(buf)
  vim.cmd('Warden explain')
  H.wait(15000, function()
    return vim.tbl_contains(messages, 'Warden: agent: Explained again.')
  end, ':Warden explain')
  -- :Warden fix sends the line's diagnostics with the server's Fix action.
  local ns = vim.api.nvim_create_namespace('test')
  vim.diagnostic.set(ns, buf, { { lnum = 1, col = 2, message = 'suspicious addition', severity = vim.diagnostic.severity.WARN } })
  vim.api.nvim_win_set_cursor(0, { 2, 0 })
  vim.cmd('Warden fix')
  H.wait(15000, function()
    return vim.tbl_contains(messages, 'Warden: agent: Nothing to fix, really.')
  end, ':Warden fix')
  H.contains(vim.json.encode(model.requests[5].messages), 'suspicious addition', 'the diagnostic reached the model')

  -- :WardenAsk with a model that never finishes; :Warden cancel stops it.
  vim.ui.input = function(_, on_confirm)
    on_confirm('Take your time')
  end
  local notes = {}
  local notify = vim.notify
  vim.notify = function(msg)
    table.insert(notes, msg)
  end
  vim.cmd('WardenAsk')
  H.wait(15000, function()
    return #model.requests == 6
  end, 'the held request')
  -- The job runs while Neovim answers its progress token; the status line
  -- shows it once the begin arrives, a round trip later.
  H.wait(5000, function()
    return require('warden').status():find('warden: ', 1, true) ~= nil
  end, 'status() shows the running agent')
  vim.cmd('Warden cancel')
  H.wait(15000, function()
    return model.abandoned == 1
  end, 'the model stream to be abandoned')
  H.wait(5000, function()
    return require('warden').status() == 'warden'
  end, 'progress to end')
  vim.notify = notify
  H.truthy(#vim.tbl_filter(function(m)
    return m:find('Warden: cancelled', 1, true) ~= nil
  end, notes) == 1, ':Warden cancel reports what it cancelled: ' .. vim.inspect(notes))
  model.stop()
end)
