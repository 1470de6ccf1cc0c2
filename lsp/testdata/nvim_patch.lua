-- Drives warden.patch.apply through Neovim's own workspace/applyEdit handler
-- (no Warden plugin), to check the edits Warden sends survive Neovim 0.7's
-- handler. Prints RESULT/BUFFER lines on stderr for the Go test.
local ws, bin = vim.env.WS, vim.env.WARDEN_BIN
local function out(s) io.stderr:write(s .. '\n') end

local ok, err = xpcall(function()
  vim.cmd('edit ' .. ws .. '/a.txt')
  local buf = vim.api.nvim_get_current_buf()
  -- Unsaved work in the buffer: the patch must apply to it, not to the disk.
  vim.api.nvim_buf_set_lines(buf, 0, 1, false, { 'one (unsaved)' })

  local ended
  vim.lsp.handlers['$/progress'] = function(_, result)
    if result and result.value and result.value.kind == 'end' then
      ended = result.value.message
    end
  end
  local id = vim.lsp.start_client({
    name = 'warden', cmd = { bin, 'serve' }, root_dir = ws,
    cmd_env = { XDG_STATE_HOME = vim.env.XDG_STATE_HOME, XDG_CONFIG_HOME = vim.env.XDG_CONFIG_HOME },
  })
  vim.lsp.buf_attach_client(buf, id)
  local client
  assert(vim.wait(10000, function()
    client = vim.lsp.get_client_by_id(id)
    return client and client.initialized
  end, 20), 'client did not initialize')
  -- Let the didOpen and the debounced didChange reach the server.
  vim.wait(400)

  client.request('workspace/executeCommand', {
    command = 'warden.patch.apply',
    arguments = { { patch = vim.env.PATCH } },
  }, function() end, buf)
  assert(vim.wait(20000, function() return ended ~= nil end, 20), 'the job did not end')
  out('RESULT: ' .. ended:gsub('\n', ' | '))
  out('BUFFER: ' .. table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), ' | '))
end, debug.traceback)
if not ok then
  out('FAIL ' .. tostring(err))
  vim.cmd('cquit 1')
end
vim.cmd('qa!')
