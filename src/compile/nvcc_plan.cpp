#include "compile/nvcc_plan.h"

#include <algorithm>
#include <optional>
#include <regex>
#include <filesystem>
#include <set>

#include <fmt/format.h>

namespace cutegen {
namespace {

// A command line split into words the way sh does for nvcc's lines: double and single quotes, and the
// backslash escapes of double quotes (`-DFATBINFILE="\"x.fatbin.c\""`). Expansions stay as written.
std::vector<std::string> shell_words(std::string_view line) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (c == ' ' || c == '\t') {
      if (in_word) words.push_back(std::move(word)), word.clear(), in_word = false;
      continue;
    }
    in_word = true;
    if (c == '\'') {
      for (++i; i < line.size() && line[i] != '\''; ++i) word += line[i];
    } else if (c == '"') {
      for (++i; i < line.size() && line[i] != '"'; ++i) {
        if (line[i] == '\\' && i + 1 < line.size() && std::string_view("\"\\$`").find(line[i + 1]) != std::string_view::npos)
          ++i;
        word += line[i];
      }
    } else if (c == '\\' && i + 1 < line.size()) {
      word += line[++i];
    } else {
      word += c;
    }
  }
  if (in_word) words.push_back(std::move(word));
  return words;
}

std::string tool_of(const std::vector<std::string>& words) {
  if (words.empty()) return "";
  const std::string& w = words.front();
  auto slash = w.rfind('/');
  return slash == std::string::npos ? w : w.substr(slash + 1);
}

bool has_word(const std::vector<std::string>& words, std::string_view w) {
  return std::find(words.begin(), words.end(), w) != words.end();
}

// The value of `name VALUE` or `name=VALUE`.
std::optional<std::string> option_value(const std::vector<std::string>& words, const std::string& name) {
  for (std::size_t i = 0; i < words.size(); ++i) {
    if (words[i] == name && i + 1 < words.size()) return words[i + 1];
    if (words[i].rfind(name + "=", 0) == 0) return words[i].substr(name.size() + 1);
  }
  return std::nullopt;
}

// The files a command writes. cudafe++'s --stub_file_name is only the name its output #includes (cicc
// writes that file); the module id is dealt with on its own.
std::set<std::string> outputs_of(const std::vector<std::string>& words) {
  std::set<std::string> out;
  const std::string tool = tool_of(words);
  std::vector<std::string> names = {"-o", "--gen_c_file_name", "--gen_device_file_name", "--create", "--embedded-fatbin"};
  if (tool == "cicc") names.emplace_back("--stub_file_name");
  for (const auto& n : names)
    if (auto v = option_value(words, n)) out.insert(*v);
  return out;
}

// Every file name a command could read: each word, and what follows the last '=' in it
// (`--image3=kind=elf,sm=90a,file=x.cubin`).
std::set<std::string> mentions_of(const std::vector<std::string>& words) {
  std::set<std::string> out;
  for (const auto& w : words) {
    out.insert(w);
    if (auto eq = w.rfind('='); eq != std::string::npos) out.insert(w.substr(eq + 1));
  }
  return out;
}

bool is_preprocessing(const std::vector<std::string>& words) { return has_word(words, "-E"); }

std::string sh_quoted(std::string_view s) {  // for sh: single quotes, an embedded one closed and escaped
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

Result<NvccPlan> parse_nvcc_dryrun(std::string_view output) {
  static const std::regex assignment(R"(([A-Za-z_][A-Za-z0-9_]*)=(.*))");
  NvccPlan plan;
  std::size_t pos = 0;
  while (pos < output.size()) {
    auto end = output.find('\n', pos);
    std::string line(output.substr(pos, end == std::string_view::npos ? std::string_view::npos : end - pos));
    pos = end == std::string_view::npos ? output.size() : end + 1;
    if (line.rfind("#$ ", 0) != 0) continue;
    line.erase(0, 3);
    while (!line.empty() && (line.back() == '\r')) line.pop_back();
    std::smatch m;
    if (std::regex_match(line, m, assignment)) plan.env.emplace_back(m[1].str(), m[2].str());
    else if (line.find_first_not_of(' ') != std::string::npos) plan.commands.push_back(line);
  }
  if (plan.commands.empty()) return Error{"nvcc --dryrun listed no commands"};
  return plan;
}

Result<OverlappedBuild> overlapped_build(const NvccPlan& plan, std::string_view log_dir) {
  std::vector<std::vector<std::string>> words;
  for (const auto& c : plan.commands) words.push_back(shell_words(c));
  auto count = [&](const char* tool) {
    return std::count_if(words.begin(), words.end(), [&](const auto& w) { return tool_of(w) == tool; });
  };
  if (count("cudafe++") != 1 || count("cicc") != 1)
    return Error{fmt::format("expected one cudafe++ and one cicc, found {} and {}", count("cudafe++"), count("cicc"))};
  std::size_t front = 0, cicc = 0;
  for (std::size_t i = 0; i < words.size(); ++i) {
    if (tool_of(words[i]) == "cudafe++") front = i;
    if (tool_of(words[i]) == "cicc") cicc = i;
  }
  if (front == 0 || !is_preprocessing(words[front - 1]))
    return Error{"cudafe++ does not follow a preprocessing step"};
  if (!has_word(words[front], "--gen_module_id_file"))
    return Error{"cudafe++ does not generate the module id"};
  auto id_file = option_value(words[front], "--module_id_file_name");
  if (!id_file || option_value(words[cicc], "--module_id_file_name") != id_file)
    return Error{"cudafe++ and cicc do not name one module id file"};

  // The device chain: from the step after cudafe++, its preprocessing, cicc, ptxas, fatbinary.
  std::size_t device_begin = front + 1, device_end = device_begin;
  while (device_end < words.size()) {
    const auto tool = tool_of(words[device_end]);
    if (tool != "cicc" && tool != "ptxas" && tool != "fatbinary" && !(device_end == device_begin && is_preprocessing(words[device_end])))
      break;
    ++device_end;
  }
  if (device_begin >= device_end || !is_preprocessing(words[device_begin]) || cicc < device_begin || cicc >= device_end)
    return Error{"the steps after cudafe++ are not the device compile (preprocessing, cicc, ptxas, fatbinary)"};

  std::set<std::string> front_out, device_out;
  for (std::size_t i = front - 1; i <= front; ++i) front_out.merge(outputs_of(words[i]));
  for (std::size_t i = device_begin; i < device_end; ++i) device_out.merge(outputs_of(words[i]));
  for (std::size_t i = device_begin; i < device_end; ++i)
    for (const auto& m : mentions_of(words[i]))
      if (front_out.count(m)) return Error{fmt::format("the device compile reads {}, which the front end writes", m)};
  for (std::size_t i = front - 1; i <= front; ++i)
    for (const auto& m : mentions_of(words[i]))
      if (device_out.count(m)) return Error{fmt::format("the front end reads {}, which the device compile writes", m)};

  // nvcc's own removals of files a step may not have made: rm -f, which does not fail on those.
  auto line = [&](std::size_t i) {
    return tool_of(words[i]) == "rm" && words[i].front() == "rm" ? "rm -f" + plan.commands[i].substr(2) : plan.commands[i];
  };
  std::string front_cmd = plan.commands[front];
  const std::string gen = " --gen_module_id_file ";
  auto at = front_cmd.find(gen);
  if (at == std::string::npos) return Error{"cudafe++'s --gen_module_id_file is not a separate word"};
  front_cmd.replace(at, gen.size(), " ");

  const std::string dir(log_dir);
  const std::string front_log = sh_quoted(dir + "/front-end.log"), device_log = sh_quoted(dir + "/device.log");
  std::string env;
  for (const auto& [name, value] : plan.env) env += fmt::format("{}={}; export {}\n", name, sh_quoted(value), name);
  std::string s = "# cutegen: nvcc's steps (nvcc --dryrun), the host front end beside the device compile\n" + env;
  for (std::size_t i = 0; i + 1 < front; ++i) s += fmt::format("{} || exit $?\n", line(i));
  s += fmt::format("( {} && {} ) > {} 2>&1 &\nfront=$!\n", plan.commands[front - 1], front_cmd, front_log);
  s += "(";
  for (std::size_t i = device_begin; i < device_end; ++i)
    s += fmt::format(" {}{}", line(i), i + 1 < device_end ? " &&" : "");
  s += fmt::format(" ) > {} 2>&1 &\ndevice=$!\n", device_log);
  s += "wait $front; front_status=$?\nwait $device; device_status=$?\n";
  s += fmt::format("cat {} >&2\n[ $front_status -eq 0 ] || exit $front_status\n", front_log);
  s += fmt::format("cat {} >&2\n[ $device_status -eq 0 ] || exit $device_status\n", device_log);
  std::string rest = "# cutegen: nvcc's steps after both chains (the host compile, the link)\n" + env;
  for (std::size_t i = device_end; i < plan.commands.size(); ++i) rest += fmt::format("{} || exit $?\n", line(i));
  std::string image;
  for (std::size_t i = device_begin; i < device_end; ++i)
    if (tool_of(words[i]) == "ptxas")
      if (auto o = option_value(words[i], "-o")) image = *o;
  OverlappedBuild out{std::move(s), std::move(rest), *id_file, std::move(image)};

  // The host compile through a precompiled header: the step whose input is cudafe++'s C++.
  auto fail = [&](std::string why) {
    out.ahead.why_not = "the host compile has not the shape it needs: " + why;
    out.no_host_pch = std::move(why);
    return out;
  };
  auto source = option_value(words[front], "--gen_c_file_name");
  if (!source) return fail("cudafe++ names no C++ output");
  out.host_source = *source;
  std::optional<std::size_t> host;
  for (std::size_t i = device_end; i < words.size(); ++i)
    if (has_word(words[i], *source)) {
      if (host) return fail("two steps read " + *source);
      host = i;
    }
  if (!host) return fail("no step reads " + *source);
  const auto& h = words[*host];
  auto object = option_value(h, "-o");
  auto x = std::find(h.begin(), h.end(), "-x");
  if (!has_word(h, "-c") || !object || !object->ends_with(".o") || x == h.end() || x + 1 == h.end() || *(x + 1) != "c++")
    return fail("the host compile is not `-c -x c++ ... -o FILE.o`");
  // Its words are quoted again for sh, so nothing in it may be an expansion.
  if (plan.commands[*host].find_first_of("$`") != std::string::npos) return fail("the host compile line has a shell expansion");
  const std::string assembly = object->substr(0, object->size() - 2) + ".s";
  // -save-temps would preprocess apart from the compile, without the header's macros (its include guards
  // above all): -S writes the assembly the check reads (host_assembly.h) instead, and the driver
  // assembles it as -save-temps would have.
  std::vector<std::string> to_s, to_gch;
  for (std::size_t i = 0; i < h.size(); ++i) {
    const auto& w = h[i];
    if (w == "-save-temps=obj" || w == "-save-temps") continue;
    if (w == "-o" && i + 1 < h.size()) {
      ++i;
      continue;
    }
    if (w == *source) {
      to_s.push_back(w);
      to_gch.emplace_back(kHostPrefixHeader);
      continue;
    }
    if (w == "-c") {
      for (const char* f : {"-S", "-Winvalid-pch", "-Werror=invalid-pch"}) to_s.emplace_back(f);
      continue;
    }
    to_s.push_back(w);
    to_gch.push_back(w == "c++" && i > 0 && h[i - 1] == "-x" ? "c++-header" : w);
  }
  for (const auto& w : {std::string("-o"), assembly}) to_s.push_back(w);
  for (const auto& w : {std::string("-o"), std::string(kHostPrefixHeader) + ".gch"}) to_gch.push_back(w);
  auto quoted = [](const std::vector<std::string>& argv) {
    std::string line;
    for (const auto& w : argv) line += (line.empty() ? "" : " ") + sh_quoted(w);
    return line;
  };
  std::vector<std::string> assemble = {h.front()};
  for (const auto& w : h)
    if (w.rfind("-m", 0) == 0) assemble.push_back(w);  // -m64: the assembler's target
  for (const auto& w : {std::string("-c"), std::string("-x"), std::string("assembler"), assembly, std::string("-o"), *object})
    assemble.push_back(w);
  out.rest_with_pch = "# cutegen: nvcc's steps after both chains, the host compile through the precompiled header\n" + env;
  for (std::size_t i = device_end; i < plan.commands.size(); ++i)
    out.rest_with_pch += i == *host ? fmt::format("{} || exit $?\n{} || exit $?\n", quoted(to_s), quoted(assemble))
                                    : fmt::format("{} || exit $?\n", line(i));
  out.pch_script = "# cutegen: the host compile's flags on the prefix of its source, as a precompiled header\n" + env +
                   quoted(to_gch) + "\n";

  // The host compile from the early stub (stub_ahead.h).
  auto no_ahead = [&](std::string why) {
    out.ahead = {};
    out.ahead.why_not = std::move(why);
    return out;
  };
  if (*host != device_end) return no_ahead("steps run between the device compile and the host compile");
  const auto& cw = words[cicc];
  auto stub = option_value(cw, "--stub_file_name"), include = option_value(cw, "--include_file_name");
  std::optional<std::string> embedded;
  for (std::size_t i = device_begin; i < device_end; ++i)
    if (tool_of(words[i]) == "fatbinary") embedded = option_value(words[i], "--embedded-fatbin");
  if (!stub || !include || !embedded) return no_ahead("cicc names no stub or fatbinary include, or fatbinary no C form");
  if ((std::filesystem::path(*stub).parent_path() / *include).lexically_normal() !=
      std::filesystem::path(*embedded).lexically_normal())
    return no_ahead("the stub's fatbinary include is not the file fatbinary writes");
  std::vector<std::string> sources;
  for (const auto& w : words[device_begin])
    if (w.ends_with(".cu") && w.front() != '-') sources.push_back(w);
  if (sources.size() != 1 || sources.front().front() == '/' || sources.front().find("..") != std::string::npos)
    return no_ahead("the device preprocessing names no one relative .cu source");
  out.ahead.source = sources.front();
  out.ahead.stub = *stub;
  out.ahead.fatbin_include = (std::filesystem::path(*stub).parent_path() / *include).string();
  out.ahead.embedded_fatbin = *embedded;
  out.ahead.assembly = assembly;
  const std::string ahead_dir = kStubAheadDir;
  std::string& front_ahead = out.ahead.front;
  front_ahead = "# cutegen: the front end beside the early stub (cicc ended after its front end, stub_ahead.h)\n" + env;
  for (std::size_t i = 0; i + 1 < front; ++i) front_ahead += fmt::format("{} || exit $?\n", line(i));
  front_ahead += fmt::format("( {} && {} ) > {} 2>&1 &\nfront=$!\n", plan.commands[front - 1], front_cmd, front_log);
  // Its TMPDIR the early directory: cicc leaves its bitcode there when libnvvm refuses the option.
  front_ahead += fmt::format("( cd {} && TMPDIR=\"$(pwd)\" && export TMPDIR && {} && {} --Xlibnvvm {} ) > {} 2>&1 &\nearly=$!\n",
                             sh_quoted(ahead_dir),
                             plan.commands[device_begin], plan.commands[cicc], kStopAfterFrontEnd,
                             sh_quoted(dir + "/stub-ahead.log"));
  front_ahead += "wait $front; front_status=$?\nwait $early\n";
  front_ahead += fmt::format("cat {} >&2\nexit $front_status\n", front_log);
  out.ahead.device = "# cutegen: the device compile alone\n" + env;
  for (std::size_t i = device_begin; i < device_end; ++i) out.ahead.device += fmt::format("{} || exit $?\n", line(i));
  out.ahead.host = "# cutegen: the host compile from the early stub, in " + ahead_dir + "\n" + env +
                   fmt::format("cd {} || exit $?\n{}\n", sh_quoted(ahead_dir), quoted(to_s));
  out.ahead.after = "# cutegen: the assembler on the host compile's assembly, then nvcc's steps after it\n" + env +
                    quoted(assemble) + " || exit $?\n";
  for (std::size_t i = *host + 1; i < plan.commands.size(); ++i) out.ahead.after += fmt::format("{} || exit $?\n", line(i));
  return out;
}

std::string module_id_for(std::string_view source_name, std::string_view hex_digest) {
  std::string name(source_name);
  std::replace(name.begin(), name.end(), '.', '_');
  std::string h(hex_digest);
  h.resize(16, '0');
  return fmt::format("_{}_{}_{}_{}", h.substr(0, 8), source_name.size(), name, h.substr(8, 8));
}

std::vector<std::string> foreign_module_ids(std::string_view text, std::string_view source_name,
                                            std::string_view module_id) {
  std::string name(source_name);
  std::replace(name.begin(), name.end(), '.', '_');
  const std::regex id_re(fmt::format("_[0-9a-f]{{8}}_{}_{}_[0-9a-f]{{8}}", source_name.size(), name));
  std::set<std::string> foreign;
  std::string s(text);
  for (auto it = std::sregex_iterator(s.begin(), s.end(), id_re); it != std::sregex_iterator(); ++it)
    if (it->str() != module_id) foreign.insert(it->str());
  return {foreign.begin(), foreign.end()};
}

}  // namespace cutegen
