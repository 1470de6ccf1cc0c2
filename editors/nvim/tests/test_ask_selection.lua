-- :Warden ask sends the file, and selected code only for a range: the
-- cursor's line is not a selection.
local H = require('helpers')

H.run('ask sends selected code only for a range', function()
  local model = require('fake_model').start({ { text = 'One.' }, { text = 'Two.' } })
  local ws = H.workspace({ ['calc.lua'] = 'local function add(a, b)\n  return a + b\nend' })
  H.setup({ env = { OPENAI_BASE_URL = model.url, OPENAI_API_KEY = 'test-key', WARDEN_MODEL = 'fake-model' } })
  H.open(ws .. '/calc.lua')
  local function user_message(i)
    H.wait(15000, function()
      return #model.requests >= i
    end, 'model request ' .. i)
    for _, m in ipairs(model.requests[i].messages) do
      if m.role == 'user' then
        return m.content
      end
    end
  end

  vim.api.nvim_win_set_cursor(0, { 2, 0 })
  vim.cmd('Warden ask what does this file do')
  local sent = user_message(1)
  H.contains(sent, 'what does this file do', 'the instruction')
  H.contains(sent, 'File: ' .. ws .. '/calc.lua', 'the file is named')
  H.truthy(not sent:find('Selected code', 1, true), 'no selected code without a selection: ' .. sent)
  H.truthy(not sent:find('return a + b', 1, true), 'the cursor line is not sent: ' .. sent)

  vim.cmd('2,2Warden ask explain this line')
  sent = user_message(2)
  H.contains(sent, 'Selected code', 'a range is selected code')
  H.contains(sent, 'return a + b', 'the range reached the model')
  H.contains(sent, '(line 2)', 'the range is located')
  model.stop()
end)
