#include "output/file_io.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

namespace kforge {

namespace fs = std::filesystem;

std::optional<std::string> read_file_bytes(const std::string& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return std::nullopt;
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return std::nullopt;
  return std::move(ss).str();
}

std::string temp_path_for(const std::string& path) { return path + ".tmp." + std::to_string(::getpid()); }

bool write_temp_file(const std::string& temp_path, const std::string& bytes, std::string& error) {
  errno = 0;
  std::ofstream out(temp_path, std::ios::binary | std::ios::trunc);
  if (!out) {
    error = errno != 0 ? std::strerror(errno) : "cannot open for writing";
    return false;
  }
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) {
    error = errno != 0 ? std::strerror(errno) : "write failed";
    std::error_code ignored;
    fs::remove(temp_path, ignored);
    return false;
  }
  return true;
}

bool write_in_place(const std::string& path, const std::string& bytes, std::string& error) {
  errno = 0;
  std::ofstream out(path, std::ios::binary);
  if (out) out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (out) out.flush();
  if (!out) {
    error = errno != 0 ? std::strerror(errno) : "write failed";
    return false;
  }
  return true;
}

bool replace_file(const std::string& temp_path, const std::string& path, std::string& error) {
  std::error_code ec;
  fs::rename(temp_path, path, ec);
  if (!ec) return true;
  // rename() cannot cross devices; copying keeps the command working there, without atomicity.
  std::error_code copy_ec;
  fs::copy_file(temp_path, path, fs::copy_options::overwrite_existing, copy_ec);
  std::error_code ignored;
  fs::remove(temp_path, ignored);
  if (copy_ec) {
    error = copy_ec.message();
    return false;
  }
  return true;
}

}  // namespace kforge
