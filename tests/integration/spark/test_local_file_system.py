"""The local session's Hadoop file system for ``file:`` (jvm/local-fs): Hadoop's own, with permissions set and links
looked up through java.nio instead of a chmod/readlink child process per file; what it writes is what Hadoop's
would."""
from __future__ import annotations

import os
import stat

import pytest

pytestmark = pytest.mark.spark


@pytest.fixture
def hadoop(spark_session):
    jvm = spark_session._jvm
    conf = spark_session._jsc.hadoopConfiguration()
    return jvm, conf, jvm.org.apache.hadoop.fs.FileSystem.getLocal(conf)


def mode(path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def test_the_local_session_uses_it_for_both_of_hadoops_apis(spark_session, hadoop):
    jvm, conf, fs = hadoop
    assert fs.getClass().getName() == "streamsonspark.hadoop.NioLocalFileSystem"
    assert fs.getRaw().getClass().getName() == "streamsonspark.hadoop.NioRawLocalFileSystem"
    context = jvm.org.apache.hadoop.fs.FileContext.getLocalFSFileContext(conf)
    assert context.getDefaultFileSystem().getClass().getName() == "streamsonspark.hadoop.NioLocalFs"


def test_files_and_directories_get_the_permissions_hadoop_gives_them(hadoop, tmp_path):
    jvm, conf, fs = hadoop
    Path, FsPermission = jvm.org.apache.hadoop.fs.Path, jvm.org.apache.hadoop.fs.permission.FsPermission
    directory = str(tmp_path / "d")
    assert fs.mkdirs(Path(directory), FsPermission(0o750))
    assert mode(directory) == 0o750
    out = fs.create(Path(directory + "/f"), FsPermission(0o640), True, 4096, 1, 1 << 20, None)
    out.write(b"x")
    out.close()
    assert mode(directory + "/f") == 0o640
    assert open(directory + "/f", "rb").read() == b"x"
    assert os.path.exists(directory + "/.f.crc")   # checksummed, as Hadoop's LocalFileSystem
    for bits in (0o000, 0o777, 0o604, 0o1777):     # the sticky bit goes through Hadoop's own chmod
        fs.setPermission(Path(directory), FsPermission(bits))
        assert mode(directory) == bits
        assert fs.getFileStatus(Path(directory)).getPermission().toShort() == bits


def test_link_status_is_hadoops_for_files_and_links(hadoop, tmp_path):
    jvm, conf, fs = hadoop
    Path = jvm.org.apache.hadoop.fs.Path
    target = tmp_path / "target"
    target.write_bytes(b"12345")
    link = tmp_path / "link"
    link.symlink_to(target)
    plain = fs.getFileLinkStatus(Path(str(target)))
    assert not plain.isSymlink() and plain.getLen() == 5
    linked = fs.getRaw().getFileLinkStatus(Path(str(link)))
    assert linked.isSymlink() and linked.getSymlink().toUri().getPath() == str(target)
    with pytest.raises(Exception, match="FileNotFoundException"):
        fs.getFileLinkStatus(Path(str(tmp_path / "missing")))


def test_a_checkpoint_renames_its_files_into_place(spark_session, tmp_path):
    """Spark's checkpoint file manager (FileContext: create a temp file, rename it over the final name) on it."""
    jvm = spark_session._jvm
    conf = spark_session._jsc.hadoopConfiguration()
    log = jvm.org.apache.spark.sql.execution.streaming.checkpointing.CheckpointFileManager.create(
        jvm.org.apache.hadoop.fs.Path(str(tmp_path)), conf)
    assert log.getClass().getSimpleName() == "FileContextBasedCheckpointFileManager"
    out = log.createAtomic(jvm.org.apache.hadoop.fs.Path(str(tmp_path / "0")), False)
    out.write(b"v1")
    out.close()
    assert (tmp_path / "0").read_bytes() == b"v1"
    assert mode(tmp_path / "0") == 0o644   # Hadoop's default file permission less its umask (022)
    assert sorted(p.name for p in tmp_path.iterdir()) == [".0.crc", "0"]   # no temp file left behind



def test_a_spark_env_sh_that_sets_the_dist_class_path_leaves_hadoops_own_file_system_and_says_so(tmp_path):
    """The local file system's jar reaches the JVM through SPARK_DIST_CLASSPATH (after Spark's jars, where the class
    archive needs it); a spark-env.sh exporting its own (a Hadoop-free Spark's setup) replaces it. The session then
    writes with Hadoop's own local file system and says why, instead of failing on a class it cannot load."""
    import subprocess
    import sys
    conf = tmp_path / "conf"
    conf.mkdir()
    (conf / "spark-env.sh").write_text(f"export SPARK_DIST_CLASSPATH={tmp_path / 'hadoop-jars'}\n")
    app = ("import logging, sys; logging.basicConfig(level=logging.WARNING)\n"
           "from streams_on_spark.runtime.spark.session import local_session\n"
           "spark = local_session('dist-class-path')\n"
           "jvm = spark._jvm\n"
           "fs = jvm.org.apache.hadoop.fs.FileSystem.getLocal(spark._jsc.hadoopConfiguration())\n"
           "print('fs', fs.getClass().getName(), fs.mkdirs(jvm.org.apache.hadoop.fs.Path(sys.argv[1])))\n")
    env = {**os.environ, "SPARK_CONF_DIR": str(conf), "PYSPARK_PYTHON": sys.executable, "SPARK_LOCAL_IP": "127.0.0.1"}
    run = subprocess.run([sys.executable, "-c", app, str(tmp_path / "out")], capture_output=True, text=True, env=env,
                         timeout=300, cwd=tmp_path)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "fs org.apache.hadoop." in run.stdout and run.stdout.rstrip().endswith(" True"), run.stdout   # Hadoop's own
    assert (tmp_path / "out").is_dir()
    assert "is not on the class path of the session's JVM (does a spark-env.sh set SPARK_DIST_CLASSPATH" in run.stderr
