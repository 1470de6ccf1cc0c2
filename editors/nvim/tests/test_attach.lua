-- The plugin starts the real server, attaches on FileType, and talks to it.
local H = require('helpers')

H.run('attach, status, checkhealth with a client', function()
  local ws = H.workspace({ ['main.go'] = 'package main\n\nfunc main() {}', ['sub/notes.txt'] = 'hello' })
  H.setup({ config = { settings = { approvalPolicy = 'untrusted' } } })
  local warden = require('warden')
  H.eq('', warden.status(), 'status before any client')

  local client, buf = H.open(ws .. '/main.go')
  H.eq('warden', client.name, 'client name')
  H.eq(ws, client.config.root_dir, 'root dir found from .git')
  H.eq('warden', warden.status(), 'statusline component with a client attached')

  -- A second file in the same workspace reuses the client.
  local client2 = H.open(ws .. '/sub/notes.txt')
  H.eq(client.id, client2.id, 'one client per workspace')

  -- warden.status answers with what the server knows about us.
  local st, err = H.execute('warden.status', {})
  H.eq(nil, err, 'warden.status error')
  H.eq(2, st.openDocuments, 'documents the server has open')
  H.eq(vim.uri_from_fname(ws), st.workspaceFolders[1].uri, 'workspace folder')
  H.eq('untrusted', st.policy.approvalPolicy, 'settings reached the server as initializationOptions')
  H.truthy(vim.tbl_contains(st.commands, 'warden.status'), 'commands listed')

  -- :Warden status shows it to the user.
  local shown
  local notify = vim.notify
  vim.notify = function(msg)
    shown = msg
  end
  vim.api.nvim_set_current_buf(buf)
  vim.cmd('Warden status')
  H.wait(5000, function()
    return shown ~= nil
  end, ':Warden status to answer')
  vim.notify = notify
  H.contains(shown, 'policy: approval untrusted, sandbox workspace-write', ':Warden status text')
  H.contains(shown, 'model: not configured', ':Warden status model')

  -- :Warden policy changes this session's approval policy.
  shown = nil
  vim.notify = function(msg)
    shown = msg
  end
  vim.cmd('Warden policy on-failure')
  H.wait(5000, function()
    return shown ~= nil
  end, ':Warden policy to answer')
  vim.notify = notify
  H.eq('Warden: approval policy is now on-failure', shown, ':Warden policy message')
  st = H.execute('warden.status', {})
  H.eq('on-failure', st.policy.approvalPolicy, 'the server took the new policy')

  -- :Warden policy granular, with the categories it rejects.
  shown = nil
  vim.notify = function(msg)
    shown = msg
  end
  vim.cmd('Warden policy granular sandbox_escalation rules')
  H.wait(5000, function()
    return shown ~= nil
  end, ':Warden policy granular to answer')
  vim.notify = notify
  H.eq('Warden: approval policy is now granular, rejecting sandbox_escalation, rules', shown, ':Warden policy granular message')
  st = H.execute('warden.status', {})
  H.eq('granular', st.policy.approvalPolicy, 'the server took granular')
  shown = nil
  vim.notify = function(msg)
    shown = msg
  end
  vim.cmd('Warden policy granular bogus')
  vim.notify = notify
  H.contains(shown, 'unknown granular category "bogus"', 'a bad category is refused')
  H.eq({ 'granular' }, vim.fn.getcompletion('Warden policy gr', 'cmdline'), 'granular completes')
  H.eq({ 'sandbox_escalation' }, vim.fn.getcompletion('Warden policy granular sa', 'cmdline'), 'categories complete')

  -- The health check now lists the running client.
  vim.cmd('checkhealth warden')
  local text = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n')
  H.contains(text, ('client %d running for %s'):format(client.id, ws), 'health lists the client')

  -- Command-line completion.
  H.eq({ 'policy' }, vim.fn.getcompletion('Warden po', 'cmdline'), 'subcommand completion')
  H.eq({ 'on-failure', 'on-request' }, vim.fn.getcompletion('Warden policy on-', 'cmdline'), 'policy completion')
  H.eq({ 'ask', 'cancel', 'explain', 'fix', 'policy', 'run', 'status', 'undo' }, vim.fn.getcompletion('Warden ', 'cmdline'), 'all subcommands')
end)
